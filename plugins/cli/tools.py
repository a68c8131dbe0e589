"""What a suite's own ``extractbench`` command may ask of the harness
(:class:`suites.protocol.CommandTools`): a model in process, the data folder."""

from __future__ import annotations

from pathlib import Path

from extractbench.fixtures.data import DataDirError, resolve_data_dir
from extractbench.fixtures.models import ModelError, ModelFileError, resolve_model_spec
from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend, default_threads
from extractbench.fixtures.models.llama_cpp.kind import LLAMA_CPP
from extractbench.suites.item import DataError
from extractbench.suites.model import Backend

__all__ = ["CliTools"]


class CliTools:
    """:class:`suites.protocol.CommandTools` for the ``extractbench`` command."""

    def load_model(self, path: str | None, seed: int, n_ctx: int) -> tuple[Backend, str]:
        """llama-cpp in process, one worker's threads, the weight-repack decision of this
        machine (``--weight-repack auto``)."""
        try:
            spec = resolve_model_spec(LLAMA_CPP.name, path, seed, default_threads(1))
        except ModelFileError as exc:
            raise ModelError(str(exc)) from None
        assert spec.path is not None
        repack = spec.repack.repack if spec.repack is not None else True
        model = LlamaCppBackend(
            spec.path, n_ctx=n_ctx, n_threads=spec.n_threads, seed=seed, repack=repack
        )
        return model, spec.path.name

    def data_dir(self, option: str | None) -> Path | None:
        """:func:`fixtures.data.resolve_data_dir`."""
        try:
            return resolve_data_dir(option)
        except DataDirError as exc:
            raise DataError(str(exc)) from None
