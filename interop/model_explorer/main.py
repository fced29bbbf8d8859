"""The Model Explorer extension module: Model Explorer imports `<extension>.main` for
`--extensions=mlxir.interop.model_explorer` and registers the adapters defined here."""

from __future__ import annotations

from typing import Any

from model_explorer import Adapter, AdapterMetadata  # pyright: ignore[reportMissingTypeStubs] (model_explorer ships no type stubs)

from mlxir.interop.model_explorer import ADAPTER_ID, FILE_EXTENSIONS, convert


class MlxirAdapter(Adapter):
    """`.pt2` (aten level), `.mlir` and `.mlxfb` files as mlxir sees them."""

    metadata = AdapterMetadata(
        id=ADAPTER_ID,
        name="mlxir adapter",
        description=(
            "mlxir's view of a torch.export .pt2 (aten level, grouped by module), "
            "an .mlir file (aten or mlx level) or a compiled .mlxfb program"
        ),
        source_repo="",
        fileExts=list(FILE_EXTENSIONS),
    )

    def __init__(self) -> None:
        super().__init__()

    def convert(self, model_path: str, settings: dict[str, Any]) -> Any:
        return convert(model_path, settings)
