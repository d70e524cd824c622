"""``python -m lil`` and the ``lil`` command pip installs: lil's command.

Both run the ``lil`` binary that comes with the package (``lil/_bin/lil``,
built with the extension module and linked with the same library, so it
needs no liblil.so), with the same arguments, in place of this process: its
exit status, output and signals are the command's own (docs/cli.md).  With
$LIL_PYTHON_EXT_DIR set (a CMake build's module directory), the binary of
that directory is run instead.
"""

import os
import sys


def binary() -> str:
    """The path of the lil command this package runs."""
    here = os.path.dirname(os.path.abspath(__file__))
    ext_dir = os.environ.get("LIL_PYTHON_EXT_DIR")
    dirs = [ext_dir, here] if ext_dir else [here]
    for d in dirs:
        path = os.path.join(d, "_bin", "lil")
        if os.access(path, os.X_OK):
            return path
    return os.path.join(here, "_bin", "lil")


def main() -> None:
    path = binary()
    try:
        os.execv(path, ["lil"] + sys.argv[1:])
    except OSError as e:
        missing = isinstance(e, FileNotFoundError)
        hint = ("\n(a package without its command: pip install ./bindings/python "
                "builds it)" if missing else "")
        sys.stderr.write(f"lil: cannot run the package's command {path}: "
                         f"{e.strerror}{hint}\n")
        sys.exit(127 if missing else 126)


if __name__ == "__main__":
    main()
