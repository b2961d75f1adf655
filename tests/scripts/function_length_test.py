#!/usr/bin/env python3
"""No function in src/ is longer than 80 lines (docs/architecture.md: small functions;
kernels/ is exempt). A function is a brace block opened outside any other block but
namespaces, classes, structs, enums and unions; its length counts from the line of
its opening brace to the line of its closing one. Comments, string and character
literals are blanked before braces are counted. The scanner first checks itself on a
made-up file, so the test cannot pass by finding no functions at all.

    python3 tests/scripts/function_length_test.py <source root>
"""
import glob
import os
import re
import sys

LIMIT = 80
SCOPE = re.compile(r"\b(namespace|class|struct|enum|union)\b")


def blank(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text):
    """(first line, length) of every function block longer than LIMIT lines."""
    code = blank(text)
    found = []
    stack = []  # (line of '{', is a scope (namespace/class/...), only scopes above it)
    line = 1
    head_start = 0  # where the text before the current '{' begins (after the last ; { })
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            head = code[head_start:i]
            scope = SCOPE.search(head) is not None and "(" not in head.split("=")[0]
            outer = all(s[1] for s in stack)
            stack.append((line, scope, outer))
            head_start = i + 1
        elif c == "}":
            if stack:
                start, scope, outer = stack.pop()
                if outer and not scope and line - start + 1 > LIMIT:
                    found.append((start, line - start + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def self_check():
    body = "\n".join("  x += %d;" % k for k in range(LIMIT + 5))
    text = ("namespace a {\nstruct S {\n  int f() {\n" + body + "\n  }\n};\n"
            "int g(int x) {\n  const char* s = \"}\";  // }\n" + body + "\n  return x;\n}\n"
            "int h() {\n  return 0;\n}\n}  // namespace a\n")
    got = long_functions(text)
    assert len(got) == 2, f"the scanner found {got} in its made-up file, expected two long functions"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    self_check()
    bad = []
    files = sorted(glob.glob(os.path.join(root, "src", "**", "*.cpp"), recursive=True) +
                   glob.glob(os.path.join(root, "src", "**", "*.h"), recursive=True))
    assert files, f"no sources under {root}/src"
    for path in files:
        for start, length in long_functions(open(path, encoding="utf-8").read()):
            bad.append(f"{os.path.relpath(path, root)}:{start}: a function of {length} lines (limit {LIMIT})")
    if bad:
        print("\n".join(bad))
        print(f"function_length_test: {len(bad)} function(s) over {LIMIT} lines: split them by job")
        sys.exit(1)
    print(f"function_length_test: ok ({len(files)} files, none over {LIMIT} lines)")


if __name__ == "__main__":
    main()
