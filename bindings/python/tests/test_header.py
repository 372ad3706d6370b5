"""The ctypes declarations match the shipped header, so the wrapper and the library cannot
drift apart silently."""

from __future__ import annotations

import ctypes
import re

from sandbox_harness import REPO
from storefront import _lib

C_TYPES = {
    "sf_result": ctypes.c_uint32,
    "sf_version_decision": ctypes.c_uint32,
    "uint16_t": ctypes.c_uint16,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
    "size_t": ctypes.c_size_t,
    "bool": ctypes.c_bool,
    "sf_log_callback": _lib.LOG_CALLBACK,
    "void": None,
}


def declarations():
    header = (REPO / "include" / "storefront.h").read_text()
    code = "\n".join(line for line in header.splitlines() if not line.lstrip().startswith(("//", "#")))
    pattern = re.compile(r"([\w ]+?\s*\**)\s*(sf_\w+)\(([^)]*)\);")
    for match in pattern.finditer(code):
        ret, name, params = match.groups()
        params = [" ".join(p.split()) for p in params.split(",") if p.strip() not in ("", "void")]
        yield name, ret.strip(), params


def ctype_of(decl: str):
    """The ctypes type the wrapper must use for a C type."""
    text = re.sub(r"\b(const|struct)\b", "", decl)
    base = re.sub(r"[\s*]+\w*$", "", text.strip()) if "*" in text else text.rsplit(" ", 1)[0]
    base = base.strip()
    stars = decl.count("*")
    if stars == 0:
        return C_TYPES[base]
    if stars == 1 and base == "char":
        # Borrowed text (const) converts to bytes; an owned `char *` must stay a pointer so
        # that it can be freed.
        return ctypes.c_char_p if "const" in decl else ctypes.c_void_p
    if stars == 1:
        return ctypes.c_void_p  # handles and byte buffers
    return ctypes.POINTER(ctypes.c_void_p)  # out-parameters


def test_every_header_function_is_declared_with_matching_types():
    declared = {name for name, _, _ in declarations()}
    assert declared == set(_lib.SIGNATURES), "update storefront/_lib.py"
    for name, ret, params in declarations():
        argtypes, restype = _lib.SIGNATURES[name]
        assert len(argtypes) == len(params), name
        for decl, actual in zip(params, argtypes):
            assert ctype_of(decl) == actual, f"{name}: {decl}"
        assert ctype_of(ret + " result") == restype, f"{name} returns {ret}"


def test_every_result_number_maps_to_an_exception_class():
    """The exception mapping follows the header's `sf_result` numbers (no result falls through
    to the generic base class except SF_RESULT_OTHER)."""
    from storefront.errors import RESULT_CLASSES

    header = (REPO / "include" / "storefront.h").read_text()
    numbers = {int(n) for n in re.findall(r"^\s*SF_RESULT_\w+ = (\d+),", header, re.M)}
    assert numbers - {0, 499} == set(RESULT_CLASSES)
