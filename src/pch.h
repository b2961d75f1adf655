// Precompiled for every translation unit that uses LibTorch.
#pragma once
#include <torch/torch.h>
