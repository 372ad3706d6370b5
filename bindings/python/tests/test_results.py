"""Result objects: a created payment's repr and str hide the checkout address (it carries a
checkout token); the value stays readable as a key and as an attribute."""

from __future__ import annotations

import json
import pickle
import pprint
import uuid


def test_checkout_url_is_hidden_from_repr_and_str_but_readable(client):
    created = client.create_merchant_payment(
        {"external_reference": f"py-repr-{uuid.uuid4()}", "amount_minor": 1250, "currency": "USD"}
    )
    url = created["checkout_url"]
    assert url.startswith("http") and "/checkout/" in url
    assert created.checkout_url == url
    assert created.order_no == created["order_no"]
    for shown in (repr(created), str(created), f"{created}", pprint.pformat(created), repr([created])):
        assert url not in shown
        assert url.rsplit("/", 1)[-1] not in shown
        assert "checkout_url=<redacted>" in shown
        assert created["order_no"] in shown
    # Still a dict for everything else.
    assert isinstance(created, dict) and json.loads(json.dumps(created))["checkout_url"] == url
    assert pickle.loads(pickle.dumps(created)) == created
    queried = client.merchant_payment(created["order_no"])
    assert url not in repr(queried) and queried.checkout_url == url
    listed = client.list_merchant_payments(order_no=created["order_no"])
    assert url not in repr(listed)
