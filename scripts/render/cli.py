"""The render scripts' argument handling: `args(doc, least, most)`.

A module the scripts in this folder import (`from cli import args`); run on its own it
prints this text.
"""
import sys


def args(doc, least=0, most=None):
    """The script's arguments, sys.argv[1:]. -h or --help first prints `doc` and exits 0;
    fewer than `least` or more than `most` arguments print it to stderr and exit 2."""
    argv = sys.argv[1:]
    if argv and argv[0] in ("-h", "--help"):
        print(doc)
        sys.exit(0)
    if len(argv) < least or (most is not None and len(argv) > most):
        print(doc, file=sys.stderr)
        sys.exit(2)
    return argv


if __name__ == "__main__":
    print(__doc__)
