"""What a suite's own ``extractbench`` command may ask of the harness
(:class:`suites.protocol.CommandTools`): a model in process, the data folder."""

from __future__ import annotations

from pathlib import Path

from extractbench.fixtures.data import DataDirError, resolve_data_dir
from extractbench.fixtures.models import ModelError, ModelFileError, resolve_model_spec
from extractbench.fixtures.models.core_share import default_threads
from extractbench.fixtures.models.registry import DEFAULT_BACKEND, backend_kind
from extractbench.suites.item import DataError
from extractbench.suites.model import Backend

__all__ = ["CliTools"]


class CliTools:
    """:class:`suites.protocol.CommandTools` for the ``extractbench`` command."""

    def load_model(self, path: str | None, seed: int, n_ctx: int) -> tuple[Backend, str]:
        """The default backend in process (:attr:`BackendKind.load_sized`), one worker's
        threads, the decisions of this machine (``--weight-repack auto``)."""
        try:
            kind = backend_kind(DEFAULT_BACKEND)
            spec = resolve_model_spec(kind.name, path, seed, default_threads(1))
        except ModelFileError as exc:
            raise ModelError(str(exc)) from None
        if kind.load_sized is None:
            raise ModelError(f"--backend {kind.name} cannot load a model for a command")
        return kind.load_sized(spec, n_ctx), spec.info().name

    def data_dir(self, option: str | None) -> Path | None:
        """:func:`fixtures.data.resolve_data_dir`."""
        try:
            return resolve_data_dir(option)
        except DataDirError as exc:
            raise DataError(str(exc)) from None
