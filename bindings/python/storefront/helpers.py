"""Request helpers backed by the core's checks."""

from __future__ import annotations

from typing import Any, Dict, Mapping

from ._call import call_json, to_json


def other_ipu(product: Mapping[str, Any], values: Mapping[str, str]) -> Dict[str, str]:
    """Builds a checked ``other_ipu`` for an order of ``product`` (as listed): keys must be the
    key part of its ``other_ipu_cnf`` (a label is refused), required inputs need a value.
    Raises :class:`~storefront.ValidationError` with ``field`` = ``other_ipu.<key>``."""
    return call_json("sf_other_ipu_build", to_json(dict(product)), to_json(dict(values)))
