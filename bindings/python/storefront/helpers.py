"""Request helpers backed by the core's checks: the ``other_ipu`` form of a product and
idempotency keys made before sending."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Tuple

from ._call import call_json, call_string, to_json


def generate_idempotency_key() -> str:
    """A fresh idempotency key (``sf-`` and 32 hex characters from the system CSPRNG, made by
    the core exactly as a create without a key would). Persist it before sending; after a
    timeout, a 202 or an unknown outcome send the same request with the same key again (the
    contract: "retry with the original key and parameters; do not use a new key")."""
    return call_string("sf_idempotency_key_generate")


@dataclass(frozen=True)
class OtherIpuField:
    """One extra input of a product, parsed by the core from ``other_ipu_cnf``
    (``key=label=flag``)."""

    #: The key to use in ``other_ipu`` (never the label).
    key: str
    #: Display text for the input.
    label: str
    #: Whether the order needs a non-blank value for it (flag ``1``).
    required: bool


def other_ipu_fields(product: Mapping[str, Any]) -> List[OtherIpuField]:
    """The extra inputs of ``product`` (as listed), in configuration order; none when it has no
    ``other_ipu_cnf``. A malformed entry raises :class:`~storefront.ValidationError` with
    ``field`` = ``other_ipu_cnf``."""
    listed = call_json("sf_other_ipu_fields", to_json(dict(product)))["items"]
    return [OtherIpuField(str(f["key"]), str(f["label"]), bool(f["required"])) for f in listed]


def other_ipu(product: Mapping[str, Any], values: Mapping[str, str]) -> Dict[str, str]:
    """Builds a checked ``other_ipu`` for an order of ``product`` (as listed): keys must be the
    key part of its ``other_ipu_cnf`` (a label is refused), required inputs need a value.
    Raises :class:`~storefront.ValidationError` with ``field`` = ``other_ipu.<key>``."""
    return call_json("sf_other_ipu_build", to_json(dict(product)), to_json(dict(values)))


class OtherIpuForm:
    """The ``other_ipu`` form of one product (like the core's ``OtherIpuForm``): the fields to
    ask the buyer for, and :meth:`build` to turn the answers into the order's ``other_ipu``.
    Refused values raise :class:`~storefront.ValidationError` naming ``other_ipu.<key>``."""

    def __init__(self, product: Mapping[str, Any]):
        self._product = dict(product)
        self.fields: Tuple[OtherIpuField, ...] = tuple(other_ipu_fields(self._product))

    @property
    def required(self) -> Tuple[OtherIpuField, ...]:
        """The fields that need a value."""
        return tuple(f for f in self.fields if f.required)

    def build(self, values: Mapping[str, str]) -> Dict[str, str]:
        """The checked ``other_ipu`` for ``values`` keyed by field key (blank optional values
        are left out)."""
        return other_ipu(self._product, values)

    def __repr__(self) -> str:
        return f"OtherIpuForm(fields={list(self.fields)!r})"
