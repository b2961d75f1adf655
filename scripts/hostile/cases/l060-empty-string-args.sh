#!/bin/bash
source "$HOSTILE/cases/_lib.sh"
x train --config ''
x predict --checkpoint '' --input ''
x table ''
