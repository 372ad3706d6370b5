#!/usr/bin/env python3
"""Writes the checked-in seed corpora under fuzz/corpus/<target>/ (run from anywhere).

Each target reads its input in its own layout (see fuzz/src/<target>.rs); this script packs
realistic sandbox-shaped values into those layouts: signed notifications, product pages, merchant
payments, money strings, configurations and requests for the C entry points.
"""
import hashlib
import hmac
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "corpus"
NOW = 1_790_000_000  # 2026-09-21T14:13:20Z
SECRET = "fuzz-notify-secret-0123456789abcdef"  # first secret of capi_json's verifier
OLD_SECRET = "fuzz-old-secret-aaaaaaaaaaaaaaaaaaaa"


def write(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def chunk(text):
    b = text.encode() if isinstance(text, str) else text
    assert len(b) < 255
    return bytes([len(b)]) + b


def sign(secret, ts, body):
    tag = hmac.new(secret.encode(), str(ts).encode() + b"." + body, hashlib.sha256).hexdigest()
    return "sha256=" + tag


def notification(evt="evt_1", status="paid", version=2):
    return json.dumps({
        "id": evt, "type": "merchant_payment.status_changed", "api_version": 1,
        "created_at": "2026-09-21T14:13:00Z",
        "data": {"order_no": "MP1", "external_reference": "order-42", "payment_no": "ch_card_usd",
                 "amount_minor": 1250, "currency": "USD", "currency_decimals": 2,
                 "status": status, "status_version": version, "test_mode": False,
                 "expires_at": "2026-09-21T14:43:00Z", "event_id": "PE1",
                 "provider_trade_no": "PT1", "occurred_at": "2026-09-21T16:01:00+02:00"}},
        separators=(",", ":")).encode()


PAYMENT = {"order_no": "MP1", "external_reference": "order-42", "payment_no": "",
           "amount_minor": 1250, "currency": "USD", "currency_decimals": 2, "status": "pending",
           "status_version": 1, "test_mode": False,
           "checkout_url": "https://pay.example/checkout/tok_abc",
           "expires_at": "2026-11-22T14:00:00+08:00", "settlement_coin": "1250000000"}
PRODUCT_BEANS = {"gd_no": "G1001", "gd_name": "Coffee beans", "gd_description": "1 kg",
                 "actual_price": 1250000000, "retail_price": 1500000000, "currency": "USD",
                 "currency_decimals": 2, "in_stock": 50, "buy_limit_num": 5,
                 "payment_policy": "automatic", "payment_methods": ["ch_card_usd", "ch_coin"]}
PRODUCT_GIFT = {"gd_no": "G1002", "gd_name": "Gift card", "actual_price": 2500000000,
                "retail_price": 2500000000, "currency": "USD", "currency_decimals": 2,
                "in_stock": 100, "buy_limit_num": 0, "payment_policy": "allowlist",
                "payment_methods": ["ch_coin"],
                "other_ipu_cnf": ["recipient_email=Recipient email=1",
                                  "gift_message=Gift message=0"],
                "buy_prompt": "Delivered by email"}
PAGE = {"list": [PRODUCT_BEANS, PRODUCT_GIFT], "total": 25, "page": 1, "limit": 20}
ORDER = {"order_no": "O1", "gd_no": "G1001", "title": "Coffee beans", "quantity": 2, "status": 1,
         "status_label": "Processing", "currency": "USD", "currency_decimals": 2,
         "total_amount": 2500000000, "discount_amount": 0, "handling_amount": 0,
         "pay_amount": 2500000000, "payment_currency": "COIN", "payment_currency_decimals": 8,
         "payment_subtotal": 2500000000, "payment_handling_amount": 0,
         "payment_pay_amount": 2500000000, "payment_no": "ch_coin", "payment_name": "Coin",
         "payment_methods": ["ch_coin"], "trade_no": None, "paid_time": "2026-11-22 13:05:09",
         "created_at": "2026-11-22 13:00:00", "updated_at": ""}
CHANNELS = {"items": [{"payment_no": "ch_card_usd", "name": "Card", "provider": "card-provider",
                       "owner": "platform", "currency": "USD", "login_required": False,
                       "test_mode": False},
                      {"payment_no": "ch_coin", "name": "Coin", "provider": "platform-coin",
                       "owner": "merchant", "currency": "COIN", "login_required": True,
                       "test_mode": True}]}
RECORDS = {"items": [{"event_id": "evt_1", "status_version": 2,
                      "event": json.loads(notification()), "delivery_status": "failed",
                      "attempts": 8, "next_attempt_at": None, "last_http_status": 500,
                      "last_error": "HTTP 500",
                      "delivery_attempts": [{"finished_at": "2026-09-21T14:13:01Z",
                                             "http_status": 500}, {"started_at": "x"}]}]}


def j(v):
    return json.dumps(v, separators=(",", ":"))


def webhook_verify():
    def pack(flags, now, skew, secrets, event_id, ts, sig, body):
        out = bytes([flags]) + struct.pack("<q", now) + struct.pack("<h", skew)
        out += b"".join(chunk(s) for s in secrets)
        for h in (event_id, ts, sig):
            out += b"\xff" if h is None else chunk(h)
        return out + body

    body = notification()
    write("webhook_verify", "signed_paid", pack(0, NOW, 0, [SECRET, OLD_SECRET], "evt_1",
                                                str(NOW), sign(SECRET, NOW, body), body))
    write("webhook_verify", "signed_old_secret_skew",
          pack(1, NOW, -299, [SECRET, OLD_SECRET], "evt_1", str(NOW - 299),
               sign(OLD_SECRET, NOW - 299, body), body))
    pending = notification("evt_2", "pending", 1)
    write("webhook_verify", "missing_signature",
          pack(2, NOW, 0, [SECRET, ""], "evt_2", str(NOW), None, pending))
    write("webhook_verify", "too_old", pack(0, NOW, 0, [SECRET, ""], "evt_2", str(NOW - 301),
                                            sign(SECRET, NOW - 301, pending), pending))
    write("webhook_verify", "not_json", pack(0, NOW, 5, ["", ""], "", "12a", "sha256=abc",
                                             b"not json"))


def response_decoders():
    for name, value in [("merchant_payment", PAYMENT), ("payments_list", {"items": [PAYMENT]}),
                        ("channels", CHANNELS), ("records", RECORDS), ("products_page", PAGE),
                        ("catalog_order", ORDER),
                        ("payment_start", {"trade_no": "T1", "redirect": "/pay/T1?s=1",
                                           "expire_time": 1790001800}),
                        ("payment_status", {"status": 1}), ("created_order", {"order_no": "O1"}),
                        ("token", {"access_token": "tok", "token_type": "Bearer",
                                   "scope": "products.read merchant_payments.create",
                                   "expires_in": 3600}),
                        ("error_body", {"error": "payment_conflict",
                                        "error_description": "key reused", "field": "amount"}),
                        ("profile", {"merchant_no": "M1", "name": "Shop"}),
                        ("retry_accepted", {"accepted": True})]:
        write("response_decoders", name, j(value))
    write("response_decoders", "notification", notification())


def money():
    def pack(scale, raw, text):
        return struct.pack("<I", scale) + struct.pack("<Q", raw) + text.encode()

    for i, (scale, raw, text) in enumerate([
            (2, 1250, "0.01"), (2, 1999, "19.99"), (2, 1, "-1"), (2, 5, "1e5"), (0, 1200, "1200"),
            (8, 1, "0.00000001"), (18, 9007199254740991, "9007199254740991"),
            (8, 2**63 - 1, "92233720368.54775807"), (8, 2**63, "-92233720368.54775808"),
            (2, 0, "99999999999999999999.99"), (4294967295, 7, "12.50"),
            (3, 0, "1" * 400), (2, 0, "+0012.500"), (19, 0, ".5")]):
        write("money", f"seed_{i:02}", pack(scale, raw, text))


def capi_json():
    def pack(selector, null_mask, number, *args):
        return bytes([selector, null_mask]) + struct.pack("<Q", number) + b"\0".join(
            a.encode() if isinstance(a, str) else a for a in args)

    config = j({"base_url": "http://127.0.0.1:9/api", "token_endpoint": "http://127.0.0.1:9/t",
                "client_id": "c", "client_secret": "s", "allow_insecure_loopback": True,
                "attempt_timeout_ms": 100, "retry": {"max_attempts": 1}})
    body = notification()
    seeds = {
        "client_new": pack(0, 0, 0, config),
        "client_new_https": pack(0, 0, 0, j({"base_url": "https://api.example/api",
                                             "token_endpoint": "https://api.example/oauth/token",
                                             "client_id": "c", "scopes": ["products.read"]})),
        "verifier_sign_verify": pack(1, 0, NOW, j([SECRET, OLD_SECRET]), SECRET, "evt_1", body),
        "verify_at_signed": pack(3, 0, NOW, "evt_1", str(NOW), sign(SECRET, NOW, body), body),
        "verify_system_clock": pack(2, 0, 0, "evt_1", str(NOW), sign(SECRET, NOW, body), body),
        "sign": pack(4, 0, NOW, SECRET, body),
        "expectation": pack(5, 0, 0, j(PAYMENT), j({"external_reference": "order-42",
                                                     "amount_minor": 1250, "currency": "USD",
                                                     "test_mode": False})),
        "other_ipu": pack(6, 0, 0, j(PRODUCT_GIFT), j({"recipient_email": "a@example.com"})),
        "payment_create": pack(7, 0, 0, j({"external_reference": "order-42",
                                           "amount_minor": 1250, "currency": "USD",
                                           "expires_in": 1800, "notify_enabled": True,
                                           "notify_url": "https://shop.example/notify",
                                           "notify_secret": SECRET,
                                           "return_url": "https://shop.example/done",
                                           "expected_currency_decimals": 2})),
        "payments_list": pack(8, 0, 0, j({"external_reference": "order-42", "limit": 20})),
        "products_query": pack(9, 0, 0, "user-token", j({"page": 2, "limit": 20,
                                                         "search_value": "tea"})),
        "order_create": pack(10, 0, 0, "user-token", j({"gd_no": "G1002", "quantity": 1,
                                                        "payment_no": "ch_coin", "other_ipu": {
                                                            "recipient_email": "a@example.com"}})),
        "payment_get": pack(11, 0, 0, "MP1"),
        "records": pack(12, 0, 20, "MP1"),
        "requeue": pack(13, 0, 0, "MP1", "evt_1"),
        "order_get": pack(14, 0, 0, "user-token", "O1"),
        "payment_start": pack(15, 0, 0, "user-token", "O1", "ch_coin"),
        "payment_status": pack(16, 0, 0, "user-token", "O1"),
        "payment_wait": pack(17, 0, 0x0305, "user-token", "O1"),
        "profile_client_token": pack(18, 1, 0, ""),
        "userinfo": pack(19, 0, 0, "user-token"),
        "version_decision": pack(20, 0, 3, ""),
    }
    for name, data in seeds.items():
        write("capi_json", name, data)


if __name__ == "__main__":
    webhook_verify()
    response_decoders()
    money()
    capi_json()
