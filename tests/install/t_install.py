#!/usr/bin/env python3
"""t_install.py -- what `cmake --install` writes works outside the build.

    python3 t_install.py BUILD_DIR SOURCE_DIR

Installs the build BUILD_DIR into a new temporary prefix, then, with no
LD_LIBRARY_PATH and nothing of the build tree on any path:

  - the installed `lil` runs and finds the installed liblil.so (its RPATH);
  - a C program (examples/quickstart.c) built with `pkg-config --cflags
    --libs lil` runs, twice (the second run replays its step);
  - the same program built by a CMake project with `find_package(lil)` and
    `lil::lil` runs;
  - the bash completion offers every verb `lil --help` lists, and a verb's
    flags; the zsh completion and the man page name every verb;
  - the target `uninstall` removes every file the install wrote.

The build's install_manifest.txt (which `cmake --install` rewrites) is put
back as it was.  Prints `ok NAME` or `FAIL NAME: why` per check, then `N
passed, N failed`; exit status 1 when a check failed.  T_KEEP=1 keeps the
temporary directory.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD, SOURCE = (os.path.abspath(a) for a in sys.argv[1:3])
RESULTS = {"passed": 0, "failed": 0}


def run(argv, **kw):
    """argv's CompletedProcess (text); raises with its output when it fails."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    if p.returncode != 0:
        raise AssertionError(f"{argv} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LIL_DIR", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH")}
    env.update(extra)
    return env


def check(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- every failure is a failed check
        RESULTS["failed"] += 1
        print(f"FAIL {name}: {e}")
        return
    RESULTS["passed"] += 1
    print(f"ok {name}")


def verbs_of(lil):
    """The verbs `lil --help` lists under "Verbs:"."""
    text = run([lil, "--help"], env=clean_env()).stdout
    block = text.split("\nVerbs:\n", 1)[1].split("\n\n", 1)[0]
    verbs = [m.group(1) for m in re.finditer(r"^  ([a-z][a-z0-9-]*) ", block, re.M)]
    assert len(verbs) > 10, f"too few verbs in lil --help: {verbs}"
    return verbs


class Installed:
    def __init__(self, tmp):
        self.tmp = tmp
        self.prefix = os.path.join(tmp, "prefix")
        self.lil = os.path.join(self.prefix, "bin", "lil")
        self.libdir = None

    def install(self):
        run(["cmake", "--install", BUILD, "--prefix", self.prefix])
        libs = [d for d in ("lib", "lib64") if os.path.isdir(os.path.join(self.prefix, d))]
        assert libs, "no lib directory under the prefix"
        self.libdir = os.path.join(self.prefix, libs[0])
        for f in (self.lil, os.path.join(self.libdir, "pkgconfig", "lil.pc"),
                  os.path.join(self.libdir, "cmake", "lil", "lilConfig.cmake"),
                  os.path.join(self.libdir, "cmake", "lil", "lilConfigVersion.cmake"),
                  os.path.join(self.prefix, "include", "lil", "lil.h")):
            assert os.path.isfile(f), f"not installed: {f}"

    def command_runs(self):
        p = run([self.lil, "--version"], env=clean_env(), cwd=self.tmp)
        version = run([os.path.join(BUILD, "cli", "lil"), "--version"]).stdout
        assert p.stdout == version, f"{p.stdout!r} != {version!r}"
        p = run(["ldd", self.lil], env=clean_env())
        line = [l for l in p.stdout.splitlines() if "liblil.so" in l]
        assert line, f"lil does not load liblil: {p.stdout}"
        loaded = os.path.realpath(line[0].split("=>")[1].split("(")[0].strip())
        assert os.path.dirname(loaded) == os.path.realpath(self.libdir), \
            f"lil loads another liblil: {line[0]}"

    def run_quickstart(self, exe, workdir):
        os.makedirs(workdir)
        first = run([exe], env=clean_env(), cwd=workdir).stdout
        second = run([exe], env=clean_env(), cwd=workdir).stdout
        assert first == second and "sku-7" in first, f"{first!r} then {second!r}"
        assert os.path.isdir(os.path.join(workdir, ".lil")), "no store made"

    def pkg_config_program(self):
        env = clean_env(PKG_CONFIG_PATH=os.path.join(self.libdir, "pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "lil"], env=env).stdout.split()
        libdirs = [os.path.realpath(f[2:]) for f in flags if f.startswith("-L")]
        assert libdirs == [os.path.realpath(self.libdir)], f"pkg-config's libdir: {flags}"
        exe = os.path.join(self.tmp, "app-pc")
        cc = os.environ.get("CC", "cc")
        run([cc, "-o", exe, os.path.join(SOURCE, "examples", "quickstart.c"), *flags,
             f"-Wl,-rpath,{self.libdir}"], env=env)
        self.run_quickstart(exe, os.path.join(self.tmp, "run-pc"))

    def find_package_program(self):
        proj = os.path.join(self.tmp, "app-cmake")
        os.makedirs(proj)
        shutil.copy(os.path.join(SOURCE, "examples", "quickstart.c"), proj)
        with open(os.path.join(proj, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\nproject(app C)\n"
                    "find_package(lil 0.1 REQUIRED)\n"
                    "add_executable(app quickstart.c)\n"
                    "target_link_libraries(app PRIVATE lil::lil)\n")
        build = os.path.join(proj, "build")
        env = clean_env(CMAKE_PREFIX_PATH=self.prefix)
        run(["cmake", "-S", proj, "-B", build], env=env)
        run(["cmake", "--build", build], env=env)
        self.run_quickstart(os.path.join(build, "app"), os.path.join(self.tmp, "run-cmake"))

    def bash_completion(self):
        comp = os.path.join(self.prefix, "share", "bash-completion", "completions", "lil")
        script = (f'source "{comp}"\n'
                  'COMP_WORDS=(lil ""); COMP_CWORD=1; _lil; echo "${COMPREPLY[*]}"\n'
                  'COMP_WORDS=(lil --dir d run --ru); COMP_CWORD=4; _lil; '
                  'echo "${COMPREPLY[*]}"\n'
                  'COMP_WORDS=(lil help ""); COMP_CWORD=2; _lil; echo "${COMPREPLY[*]}"\n')
        out = run(["bash", "--norc", "-c", script], env=clean_env()).stdout.split("\n")
        verbs = verbs_of(self.lil)
        assert out[0].split() == verbs, f"verbs offered {out[0].split()} != {verbs}"
        assert out[1].split() == ["--run-id"], f"run --ru offers {out[1]!r}"
        assert out[2].split() == verbs, f"help offers {out[2]!r}"

    def zsh_completion(self):
        with open(os.path.join(self.prefix, "share", "zsh", "site-functions", "_lil"),
                  encoding="utf-8") as f:
            text = f.read()
        assert text.startswith("#compdef lil\n"), "no #compdef line"
        missing = [v for v in verbs_of(self.lil) if f"\n    '{v}:" not in text]
        assert not missing, f"zsh completion lacks {missing}"

    def man_page(self):
        page = os.path.join(self.prefix, "share", "man", "man1", "lil.1")
        text = run(["man", "-l", page], env=clean_env(MANWIDTH="100", MANPAGER="cat",
                                                      PAGER="cat")).stdout
        text = re.sub(r".\x08", "", text)  # overstrike (bold) when not a terminal
        assert "\nVERBS\n" in text, "no VERBS section"
        verbs_part = text.split("\nVERBS\n", 1)[1]
        missing = [v for v in verbs_of(self.lil)
                   if not re.search(rf"^   {re.escape(v)}\n", verbs_part, re.M)]
        assert not missing, f"the man page has no section for {missing}"
        help_run = run([self.lil, "help", "run"], env=clean_env()).stdout
        first = help_run.splitlines()[0].strip()
        assert first in verbs_part, f"the man page lacks `lil help run`'s {first!r}"

    def uninstall(self):
        run(["cmake", "--build", BUILD, "--target", "uninstall"])
        left = [os.path.join(d, f) for d, _, fs in os.walk(self.prefix) for f in fs]
        assert not left, f"left after uninstall: {left}"


def main():
    tmp = tempfile.mkdtemp(prefix="lil-install-")
    manifest = os.path.join(BUILD, "install_manifest.txt")
    saved = None
    if os.path.exists(manifest):
        with open(manifest, "rb") as f:
            saved = f.read()
    inst = Installed(tmp)
    try:
        check("install", inst.install)
        if RESULTS["failed"] == 0:
            check("installed_lil_finds_its_library", inst.command_runs)
            check("pkg_config_program_runs", inst.pkg_config_program)
            check("find_package_program_runs", inst.find_package_program)
            check("bash_completion_offers_every_verb", inst.bash_completion)
            check("zsh_completion_names_every_verb", inst.zsh_completion)
            check("man_page_names_every_verb", inst.man_page)
            check("uninstall_removes_every_file", inst.uninstall)
    finally:
        if saved is not None:
            with open(manifest, "wb") as f:
                f.write(saved)
        elif os.path.exists(manifest):
            os.unlink(manifest)
        if os.environ.get("T_KEEP") == "1":
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
