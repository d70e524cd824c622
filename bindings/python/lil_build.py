"""The build backend of the lil package (PEP 517), standard library only.

``pip install ./bindings/python`` calls build_wheel here: CMake builds the
extension module lil._lil from the repository's sources (target
lil_python, tests and benchmarks off, Release) in a temporary directory --
the same build definition as everything else (bindings/python/
CMakeLists.txt) -- and the wheel gets the package's Python files and that
module.  It needs what lil needs to build (scripts/deps.sh) and Python's
headers (python3-dev).  Nothing is downloaded: the backend requires no
package, so pip's isolated build environment stays empty.

The wheel is for this interpreter and platform (e.g.
cp311-cp311-linux_x86_64).  There is no sdist: the package is built from a
checkout of the repository.  CMAKE_BUILD_PARALLEL_LEVEL sets the build's
parallelism (default: the number of CPUs).  LIL_PYTHON_PREBUILT names a
module already built (by the CMake build of the tests, say) to pack instead
of building one, and LIL_PYTHON_PREBUILT_CLI the command: the test of the
installation uses them.

Besides the package, the wheel holds lil's command, built by the same CMake
run (target lil_python_cli, linked as the module is: no liblil.so needed),
as lil/_bin/lil, and a console script `lil` that runs it (lil/__main__.py,
which `python -m lil` runs too).
"""

import base64
import hashlib
import os
import posixpath
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME = "lil"


def _version() -> str:
    with open(os.path.join(ROOT, "include", "lil", "lil.h"), encoding="utf-8") as f:
        m = re.search(r'#define LIL_VERSION\s+"([^"]+)"', f.read())
    if not m:
        raise RuntimeError("cannot read LIL_VERSION from include/lil/lil.h")
    return m.group(1)


def _tag() -> str:
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{impl}-{impl}-{plat}"


def _extras() -> str:
    """Provides-Extra and Requires-Dist lines of the extras of pyproject.toml
    ([project.optional-dependencies]: the frameworks the adapters were
    tested with).  tomllib is Python 3.11's: an older Python builds the
    wheel without them."""
    try:
        import tomllib
    except ImportError:
        return ""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f).get("project", {}).get("optional-dependencies", {})
    lines = []
    for extra, reqs in sorted(extras.items()):
        lines.append(f"Provides-Extra: {extra}\n")
        lines.extend(f'Requires-Dist: {r}; extra == "{extra}"\n' for r in reqs)
    return "".join(lines)


def _metadata() -> str:
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Durable execution: @durable workflows whose steps run once, "
            "on lil's C engine\nRequires-Python: >=3.8\n" + _extras())


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def _build_module(build_dir: str) -> "tuple[str, str]":
    configure = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                 "-DLIL_BUILD_TESTS=OFF", "-DLIL_BUILD_BENCH=OFF", "-DLIL_PYTHON_COPY=OFF",
                 f"-DPython3_EXECUTABLE={sys.executable}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    subprocess.check_call(configure, stdout=sys.stderr)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    subprocess.check_call(["cmake", "--build", build_dir, "--target", "lil_python",
                           "lil_python_cli", "--parallel", jobs], stdout=sys.stderr)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    out = os.path.join(build_dir, "bindings", "python", "lil")
    paths = (os.path.join(out, "_lil" + suffix), os.path.join(out, "_bin", "lil"))
    for path in paths:
        if not os.path.isfile(path):
            raise RuntimeError(f"CMake did not build {path}")
    return paths


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{arcname},sha256={digest.decode('ascii')},{len(data)}"


def _files(module: str, command: str):
    """(arcname, bytes) of every file of the wheel but RECORD."""
    pkg = os.path.join(HERE, NAME)
    for sub in ("", "adapters"):
        for name in sorted(os.listdir(os.path.join(pkg, sub))):
            if name.endswith(".py"):
                with open(os.path.join(pkg, sub, name), "rb") as f:
                    yield "/".join(filter(None, (NAME, sub, name))), f.read()
    with open(module, "rb") as f:
        yield f"{NAME}/{os.path.basename(module)}", f.read()
    with open(command, "rb") as f:
        yield f"{NAME}/_bin/lil", f.read()
    info = _dist_info()
    yield f"{info}/METADATA", _metadata().encode("utf-8")
    yield f"{info}/entry_points.txt", b"[console_scripts]\nlil = lil.__main__:main\n"
    wheel = (f"Wheel-Version: 1.0\nGenerator: lil_build\nRoot-Is-Purelib: false\n"
             f"Tag: {_tag()}\n")
    yield f"{info}/WHEEL", wheel.encode("utf-8")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    with tempfile.TemporaryDirectory(prefix="lil-build-") as tmp:
        if os.environ.get("LIL_PYTHON_PREBUILT"):
            module = os.environ["LIL_PYTHON_PREBUILT"]
            command = os.environ.get("LIL_PYTHON_PREBUILT_CLI") or \
                os.path.join(os.path.dirname(module), "_bin", "lil")
        else:
            module, command = _build_module(os.path.join(tmp, "cmake"))
        record = []
        with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                             zipfile.ZIP_DEFLATED) as zf:
            for arcname, data in _files(module, command):
                info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
                executable = arcname.endswith(".so") or arcname == f"{NAME}/_bin/lil"
                # the file type too: pip keeps the x bits of regular files only
                info.external_attr = (0o100755 if executable else 0o100644) << 16
                zf.writestr(info, data, zipfile.ZIP_DEFLATED)
                record.append(_record_line(arcname, data))
            rec = f"{_dist_info()}/RECORD"
            record.append(f"{rec},,")
            zf.writestr(zipfile.ZipInfo(rec, date_time=(2020, 1, 1, 0, 0, 0)),
                        "\n".join(record) + "\n")
    return name
