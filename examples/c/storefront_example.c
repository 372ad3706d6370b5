/*
 * storefront C example: verifies a webhook, runs a webhook inbox, walks the catalog flow and a
 * merchant payment against the standalone sandbox, through include/storefront.h only. It calls
 * every function of the header at least once, so running it under valgrind checks the ownership
 * of every export.
 *
 *   storefront-sandbox --port 0 --ready-file /tmp/sbx.json &
 *   cc -std=c99 -Iinclude examples/c/storefront_example.c -Ltarget/debug -lstorefront
 *   ./a.out /tmp/sbx.json
 *
 * env_demo() configures a client the way an application does (sf_config_from_env) from the
 * STOREFRONT_* variables the sandbox prints and writes to the ready file's "env".
 *
 * Ownership, as documented in the header: every `char *` written to an `..._out` argument is
 * ours and goes back through sf_string_free; every sf_error through sf_error_free; handles
 * through their own _free. All of them accept NULL. Run under valgrind, this program reports no
 * leak.
 *
 * Real applications parse the JSON results with a JSON library; this example only pulls a few
 * flat string fields out with json_field() below to stay dependency-free.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "storefront.h"

static int failures = 0;

/* Prints a failure's detail (branching happens on the codes, never the message) and frees it. */
static void report(const char *what, sf_result result, sf_error *error) {
    fprintf(stderr, "%s failed: result %u", what, (unsigned)result);
    if (error != NULL) {
        fprintf(stderr, " (HTTP %u, error %s): %s", (unsigned)sf_error_http_status(error),
                sf_error_code(error) ? sf_error_code(error) : "-", sf_error_message(error));
    }
    fprintf(stderr, "\n");
    sf_error_free(error);
    failures++;
}

/* Checks a result; on success frees the output string, on failure reports the error. */
static int ok(const char *what, sf_result result, char *output, sf_error *error) {
    if (result != SF_RESULT_OK) {
        report(what, result, error);
        return 0;
    }
    sf_string_free(output);
    return 1;
}

/* Copies the flat string field "key":"value" of a JSON object into out. Example-only helper. */
static int json_field(const char *json, const char *key, char *out, size_t size) {
    char pattern[64];
    const char *start;
    const char *end;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    start = json ? strstr(json, pattern) : NULL;
    if (start == NULL) {
        return 0;
    }
    start += strlen(pattern);
    end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) {
        return 0;
    }
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 1;
}

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    char *text;
    long size;
    if (file == NULL) {
        return NULL;
    }
    fseek(file, 0, SEEK_END);
    size = ftell(file);
    rewind(file);
    text = malloc((size_t)size + 1);
    if (text != NULL && fread(text, 1, (size_t)size, file) == (size_t)size) {
        text[size] = '\0';
    } else {
        free(text);
        text = NULL;
    }
    fclose(file);
    return text;
}

/*
 * POSTs JSON to a sandbox control endpoint (sandbox only: mints a user token, which the real
 * service issues through its authorization-code flow) and copies one string field of the answer.
 */
static int sandbox_post(const char *origin, const char *path, const char *body, const char *field,
                        char *out, size_t size) {
    char request[1024];
    char answer[8192];
    struct sockaddr_in address;
    unsigned port = 0;
    size_t used = 0;
    ssize_t got;
    int fd;
    int ok;
    if (sscanf(origin, "http://127.0.0.1:%u", &port) != 1) {
        return 0;
    }
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return 0;
    }
    snprintf(request, sizeof request,
             "POST /_sandbox%s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
             path, port, strlen(body), body);
    ok = write(fd, request, strlen(request)) == (ssize_t)strlen(request);
    while (ok && used < sizeof answer - 1 && (got = read(fd, answer + used, sizeof answer - 1 - used)) > 0) {
        used += (size_t)got;
    }
    answer[used] = '\0';
    close(fd);
    return ok && strncmp(answer, "HTTP/1.1 2", 10) == 0 &&
           (field == NULL || json_field(strstr(answer, "\r\n\r\n"), field, out, size));
}

/* Webhook: sign a notification like the service, verify it, check it, reject a tampered one. */
static void webhook_demo(void) {
    const char *secret = "whsec_example_0123456789abcdef0123456789";
    const char *body =
        "{\"id\":\"EVT-42\",\"type\":\"merchant_payment.status_changed\",\"api_version\":1,"
        "\"created_at\":\"2026-11-22T12:00:00Z\",\"data\":{\"order_no\":\"MP42\","
        "\"external_reference\":\"order-42\",\"payment_no\":\"ch_card_usd\",\"amount_minor\":1250,"
        "\"currency\":\"USD\",\"currency_decimals\":2,\"status\":\"paid\",\"status_version\":2,"
        "\"test_mode\":false,\"expires_at\":\"2026-11-22T12:30:00Z\",\"event_id\":\"PE42\","
        "\"provider_trade_no\":\"T42\",\"occurred_at\":\"2026-11-22T12:01:00Z\"}}";
    const char *expected =
        "{\"external_reference\":\"order-42\",\"amount_minor\":1250,\"currency\":\"USD\",\"test_mode\":false}";
    char timestamp[32];
    char *tampered;
    char *signature = NULL;
    char *notification = NULL;
    char *rejected = NULL;
    char data[1024];
    sf_webhook_verifier *verifier = NULL;
    sf_error *error = NULL;
    sf_result result;
    long now = (long)time(NULL);

    snprintf(timestamp, sizeof timestamp, "%ld", now);
    result = sf_webhook_sign(secret, now, (const uint8_t *)body, strlen(body), &signature, &error);
    if (result != SF_RESULT_OK) {
        report("sf_webhook_sign", result, error);
        return;
    }
    result = sf_webhook_verifier_new("[\"whsec_example_0123456789abcdef0123456789\"]", &verifier, &error);
    if (result != SF_RESULT_OK) {
        report("sf_webhook_verifier_new", result, error);
        sf_string_free(signature);
        return;
    }
    /* The raw body bytes exactly as received, as pointer and length. */
    result = sf_webhook_verify(verifier, "EVT-42", timestamp, signature, (const uint8_t *)body,
                               strlen(body), &notification, &error);
    if (result != SF_RESULT_OK) {
        report("sf_webhook_verify", result, error);
    } else {
        printf("webhook verified: %.60s...\n", notification);
        /* After verifying: reference, amount, currency and test_mode; then the version guard. */
        const char *data_start = strstr(notification, "\"data\":");
        snprintf(data, sizeof data, "%s", data_start ? data_start + 7 : "{}");
        data[strlen(data) - 1] = '\0'; /* drop the notification's closing brace */
        result = sf_payment_expectation_check(data, expected, &error);
        if (result != SF_RESULT_OK) {
            report("sf_payment_expectation_check", result, error);
        } else {
            printf("payment matches the merchant's order\n");
        }
        if (sf_status_version_decision(1, 2) != SF_VERSION_DECISION_APPLY ||
            sf_status_version_decision(2, 1) != SF_VERSION_DECISION_STALE) {
            fprintf(stderr, "status version guard misbehaves\n");
            failures++;
        }
    }
    /* The receiver's fast path: the library checks signature, timestamp and envelope over the
     * caller's own bytes and hands nothing back; the caller then parses `body` once with its own
     * JSON parser. */
    result = sf_webhook_verify_body(verifier, "EVT-42", timestamp, signature, (const uint8_t *)body,
                                    strlen(body), &error);
    if (result != SF_RESULT_OK) {
        report("sf_webhook_verify_body", result, error);
    } else {
        printf("webhook body verified in place (%zu bytes)\n", strlen(body));
    }
    result = sf_webhook_verify_body_at(verifier, "EVT-42", timestamp, signature, (const uint8_t *)body,
                                       strlen(body), (int64_t)now - 360, &error);
    if (result != SF_RESULT_WEBHOOK_TIMESTAMP_IN_FUTURE) {
        fprintf(stderr, "a delivery from the future must be rejected (got %u)\n", (unsigned)result);
        failures++;
    } else {
        printf("webhook from the future rejected: %s\n", sf_error_message(error));
    }
    sf_error_free(error);
    error = NULL;
    tampered = malloc(strlen(body) + 1);
    if (tampered != NULL) {
        strcpy(tampered, body);
        tampered[strlen(tampered) - 3] = '9'; /* any changed byte breaks the signature */
        result = sf_webhook_verify(verifier, "EVT-42", timestamp, signature, (const uint8_t *)tampered,
                                   strlen(tampered), &rejected, &error);
        if (result != SF_RESULT_WEBHOOK_SIGNATURE_MISMATCH || rejected != NULL) {
            fprintf(stderr, "a tampered body must be rejected (got %u)\n", (unsigned)result);
            failures++;
        } else {
            printf("tampered webhook rejected: %s\n", sf_error_message(error));
        }
        sf_error_free(error);
        error = NULL;
        free(tampered);
    }
    /* With an injected clock six minutes later the same delivery is outside the tolerance. */
    result = sf_webhook_verify_at(verifier, "EVT-42", timestamp, signature, (const uint8_t *)body,
                                  strlen(body), (int64_t)now + 360, &rejected, &error);
    if (result != SF_RESULT_WEBHOOK_TIMESTAMP_TOO_OLD || sf_error_result(error) != result ||
        sf_error_http_status(error) != 0 || sf_error_retry_after_ms(error) != -1) {
        fprintf(stderr, "a stale delivery must be rejected (got %u)\n", (unsigned)result);
        failures++;
    } else {
        printf("stale webhook rejected: %s\n", sf_error_json(error));
    }
    sf_error_free(error);
    sf_string_free(rejected);
    sf_string_free(notification);
    sf_string_free(signature);
    sf_webhook_verifier_free(verifier);
}

/* Catalog flow: profile and products with the client token, then an order paid by a user. */
static void catalog_demo(sf_client *client, const char *origin) {
    char *profile = NULL;
    char *page = NULL;
    char *created = NULL;
    char *start = NULL;
    char *outcome = NULL;
    char *shown_price = NULL;
    int64_t raw_price = 0;
    char token[512];
    char order_no[128];
    char name[256];
    sf_error *error = NULL;
    sf_result result;

    result = sf_client_authenticate(client, &profile, &error);
    if (!ok("sf_client_authenticate", result, profile, error)) {
        return;
    }
    result = sf_merchant_profile_get(client, NULL, &profile, &error);
    if (result != SF_RESULT_OK) {
        report("sf_merchant_profile_get", result, error);
        return;
    }
    if (json_field(profile, "name", name, sizeof name)) {
        printf("merchant: %s\n", name);
    }
    sf_string_free(profile);

    result = sf_products_list(client, NULL, "{\"limit\":5}", &page, &error);
    if (result != SF_RESULT_OK) {
        report("sf_products_list", result, error);
        return;
    }
    printf("products: %.80s...\n", page);
    sf_string_free(page);

    /* Catalog prices are eight-decimal fixed point (value x 10^8), exact: text to the raw
     * integer and back at a display precision (an error, never rounding, if digits are cut). */
    result = sf_fixed_point8_parse("12.5", &raw_price, &error);
    if (result != SF_RESULT_OK || raw_price != 1250000000) {
        report("sf_fixed_point8_parse", result, error);
        return;
    }
    result = sf_fixed_point8_format(raw_price, 2, &shown_price, &error);
    if (result != SF_RESULT_OK || strcmp(shown_price, "12.50") != 0) {
        report("sf_fixed_point8_format", result, error);
        sf_string_free(shown_price);
        return;
    }
    printf("catalog price: %s\n", shown_price);
    sf_string_free(shown_price);

    if (!sandbox_post(origin, "/users/alice/tokens", "{\"client_id\":\"sbx_merchant_client\"}",
                      "access_token", token, sizeof token)) {
        fprintf(stderr, "could not mint a user token at the sandbox\n");
        failures++;
        return;
    }
    result = sf_userinfo_get(client, token, &page, &error);
    if (!ok("sf_userinfo_get", result, page, error)) {
        return;
    }
    result = sf_order_create(client, token,
                             "{\"gd_no\":\"G1001\",\"quantity\":1,\"payment_no\":\"ch_platform_coin\"}",
                             &created, &error);
    if (result != SF_RESULT_OK || !json_field(created, "order_no", order_no, sizeof order_no)) {
        report("sf_order_create", result, error);
        sf_string_free(created);
        return;
    }
    sf_string_free(created);
    printf("order created: %s\n", order_no);

    result = sf_order_get(client, token, order_no, &page, &error);
    if (!ok("sf_order_get", result, page, error)) {
        return;
    }
    result = sf_payment_start(client, token, order_no, "ch_platform_coin", &start, &error);
    if (result != SF_RESULT_OK) {
        report("sf_payment_start", result, error);
        return;
    }
    printf("payment started: %s\n", start);
    sf_string_free(start);

    result = sf_payment_wait(client, token, order_no, 200, 30000, &outcome, &error);
    if (result != SF_RESULT_OK) {
        report("sf_payment_wait", result, error);
        return;
    }
    /* {"outcome":"final",...} or {"outcome":"still_pending",...} (an outcome, not an error). */
    if (strncmp(outcome, "{\"outcome\":\"final\",\"payment_status\":1", 37) != 0) {
        fprintf(stderr, "expected a paid order, got %s\n", outcome);
        failures++;
    } else {
        printf("order paid: %.80s...\n", outcome);
    }
    sf_string_free(outcome);
    result = sf_payment_status(client, token, order_no, &outcome, &error);
    if (!ok("sf_payment_status", result, outcome, error)) {
        return;
    }

    /* A service error keeps its HTTP status and `error` code. */
    result = sf_merchant_payment_get(client, "MP-DOES-NOT-EXIST", &outcome, &error);
    if (result != SF_RESULT_API || sf_error_http_status(error) != 404 ||
        strcmp(sf_error_code(error), "payment_not_found") != 0) {
        fprintf(stderr, "expected 404 payment_not_found (got %u)\n", (unsigned)result);
        failures++;
    } else {
        printf("unknown payment: HTTP %u %s\n", (unsigned)sf_error_http_status(error), sf_error_code(error));
    }
    sf_error_free(error);
}

/* Merchant collection: channels, a payment paid at the checkout, query, list, records. */
static void merchant_demo(sf_client *client, const char *origin) {
    char *output = NULL;
    char *key = NULL;
    char *shown = NULL;
    char order_no[128];
    char reference[64];
    char path[256];
    char request[384];
    char input[512];
    uint64_t amount_minor = 0;
    sf_error *error = NULL;
    sf_result result;

    result = sf_channels_list(client, &output, &error);
    if (!ok("sf_channels_list", result, output, error)) {
        return;
    }
    /* "12.50" USD (2 decimals) in minor units, exactly (never through a double). */
    result = sf_money_to_minor("12.50", 2, &amount_minor, &error);
    if (result != SF_RESULT_OK || amount_minor != 1250) {
        report("sf_money_to_minor", result, error);
        return;
    }
    /* The idempotency key exists before sending: persist it first, so a timeout or a 202 is
     * retried with the same key and parameters. */
    result = sf_idempotency_key_generate(&key, &error);
    if (result != SF_RESULT_OK) {
        report("sf_idempotency_key_generate", result, error);
        return;
    }
    /* Unique per run: the reconciler below finds "ambiguous" when two payments share it. */
    snprintf(reference, sizeof reference, "c-example-%ld-%ld", (long)time(NULL), (long)getpid());
    snprintf(request, sizeof request,
             "{\"external_reference\":\"%s\",\"amount_minor\":%llu,\"currency\":\"USD\","
             "\"idempotency_key\":\"%s\"}",
             reference, (unsigned long long)amount_minor, key);
    sf_string_free(key);
    result = sf_merchant_payment_create(client, request, &output, &error);
    if (result != SF_RESULT_OK || !json_field(output, "order_no", order_no, sizeof order_no)) {
        report("sf_merchant_payment_create", result, error);
        sf_string_free(output);
        return;
    }
    /* The result holds the idempotency key to persist and the checkout_url (never logged). */
    sf_string_free(output);
    snprintf(path, sizeof path, "/merchant-payments/%s/checkout/pay", order_no);
    if (!sandbox_post(origin, path, "{\"payment_no\":\"ch_card_usd\"}", NULL, NULL, 0)) {
        fprintf(stderr, "the sandbox buyer could not pay\n");
        failures++;
        return;
    }
    result = sf_merchant_payment_get(client, order_no, &output, &error);
    if (result != SF_RESULT_OK || strstr(output, "\"status\":\"paid\"") == NULL) {
        report("sf_merchant_payment_get", result, error);
        sf_string_free(output);
        return;
    }
    sf_string_free(output);
    result = sf_money_from_minor(amount_minor, 2, &shown, &error);
    if (result != SF_RESULT_OK || strcmp(shown, "12.50") != 0) {
        report("sf_money_from_minor", result, error);
        sf_string_free(shown);
        return;
    }
    printf("merchant payment %s paid (%s USD)\n", order_no, shown);
    sf_string_free(shown);
    snprintf(request, sizeof request, "{\"order_no\":\"%s\"}", order_no);
    result = sf_merchant_payments_list(client, request, &output, &error);
    if (!ok("sf_merchant_payments_list", result, output, error)) {
        return;
    }
    result = sf_notification_records_list(client, order_no, 10, &output, &error);
    if (!ok("sf_notification_records_list", result, output, error)) {
        return;
    }
    /* Re-queueing an event that does not exist is refused by the service. */
    result = sf_notification_requeue(client, order_no, "no-such-event", &output, &error);
    if (result == SF_RESULT_OK) {
        sf_string_free(output);
    } else if (result != SF_RESULT_API) {
        report("sf_notification_requeue", result, error);
        return;
    } else {
        printf("re-queue refused: HTTP %u %s\n", (unsigned)sf_error_http_status(error),
               sf_error_code(error) ? sf_error_code(error) : "-");
        sf_error_free(error);
    }
    /* Reconcile the shop's record of this order (nothing booked yet): one JSON line per record,
     * here "paid_not_booked" with the event to book; the last line's cursor resumes the run,
     * and a finished run gives an empty string. */
    snprintf(input, sizeof input,
             "{\"records\":[{\"external_reference\":\"%s\",\"expected_amount\":1250,"
             "\"currency\":\"USD\"}],\"options\":{\"requeue_failed\":false}}",
             reference);
    output = NULL;
    error = NULL;
    result = sf_reconcile(client, input, 10, &output, &error);
    if (result != SF_RESULT_OK || strstr(output, "\"finding\":\"paid_not_booked\"") == NULL) {
        report("sf_reconcile", result, error);
        sf_string_free(output);
        return;
    }
    /* The line carries the payment as queried, checkout_url included: never log it whole. */
    if (!json_field(output, "event_id", path, sizeof path)) {
        report("sf_reconcile (event_id)", SF_RESULT_OK, NULL);
        sf_string_free(output);
        return;
    }
    printf("reconciled: %s paid, not booked: book event %s once\n", reference, path);
    sf_string_free(output);
    snprintf(input, sizeof input,
             "{\"records\":[{\"external_reference\":\"%s\",\"expected_amount\":1250,"
             "\"currency\":\"USD\"}],\"options\":{\"cursor\":{\"next_index\":1,"
             "\"last_reference\":\"%s\"}}}",
             reference, reference);
    output = NULL;
    error = NULL;
    result = sf_reconcile(client, input, 10, &output, &error);
    if (result != SF_RESULT_OK || output[0] != '\0') {
        report("sf_reconcile (resumed after the last record)", result, error);
        sf_string_free(output);
        return;
    }
    sf_string_free(output);
}

/* Bad arguments get their own result codes and leave the client usable. */
static void argument_demo(sf_client *client) {
    const char bad_utf8[] = {'{', (char)0xC3, (char)0x28, '}', '\0'};
    const char *gift_card =
        "{\"gd_no\":\"G1002\",\"gd_name\":\"Gift card\",\"actual_price\":100000000,"
        "\"retail_price\":100000000,\"currency\":\"USD\",\"currency_decimals\":2,\"in_stock\":5,"
        "\"buy_limit_num\":0,\"payment_policy\":\"allowlist\","
        "\"other_ipu_cnf\":[\"recipient_email=Recipient email=1\"]}";
    char *output = NULL;
    sf_error *error = NULL;
    sf_result result;

    result = sf_merchant_payment_get(client, NULL, &output, &error);
    if (result != SF_RESULT_NULL_ARGUMENT || output != NULL || sf_error_field(error) == NULL ||
        strcmp(sf_error_field(error), "order_no") != 0) {
        fprintf(stderr, "NULL must be refused (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    result = sf_merchant_payment_create(client, bad_utf8, &output, &error);
    if (result != SF_RESULT_INVALID_UTF8) {
        fprintf(stderr, "invalid UTF-8 must be refused (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    result = sf_merchant_payment_create(client, "{\"amount_minor\":", &output, &error);
    if (result != SF_RESULT_INVALID_JSON) {
        fprintf(stderr, "invalid JSON must be refused (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    /* The product's extra inputs (key, label, required), parsed by the library. */
    result = sf_other_ipu_fields(gift_card, &output, &error);
    if (result != SF_RESULT_OK || strstr(output, "\"key\":\"recipient_email\"") == NULL) {
        report("sf_other_ipu_fields", result, error);
    } else {
        sf_string_free(output);
    }
    output = NULL;
    error = NULL;
    /* Client-side validation names the field and sends nothing. */
    result = sf_other_ipu_build(gift_card, "{\"Recipient email\":\"a@example.com\"}", &output, &error);
    if (result != SF_RESULT_VALIDATION || error == NULL || sf_error_description(error) != NULL) {
        fprintf(stderr, "a label must be refused as an other_ipu key (got %u)\n", (unsigned)result);
        failures++;
    } else {
        printf("refused before sending: %s (field %s; input limit %zu bytes)\n", sf_error_message(error),
               sf_error_field(error), sf_max_input_bytes());
    }
    sf_error_free(error);
}

/* Log records handed to the callback, from any of the library's threads. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_lines = 0;

static void on_log(void *user_data, const char *json_line) {
    (void)user_data;
    /* json_line is borrowed for the call; a real host copies it into its logger. It never
     * carries a secret, a token or a checkout URL. */
    if (strstr(json_line, "\"level\"") != NULL) {
        pthread_mutex_lock(&log_lock);
        log_lines++;
        pthread_mutex_unlock(&log_lock);
    }
}

/* Living inside a host (docs/c-abi-hosts.md): strict input, cancellation, persistent clients
 * and logs. */
static void host_demo(sf_client *client, const char *config) {
    char strict[2300];
    char *output = NULL;
    sf_client *refused = NULL;
    sf_error *error = NULL;
    sf_cancel_token *token;
    sf_result result;

    /* A misspelt key is refused, naming its path, instead of being ignored. */
    snprintf(strict, sizeof strict, "{\"atempt_timeout_ms\":5000,%s", config + 1);
    result = sf_client_new(strict, &refused, &error);
    if (result != SF_RESULT_VALIDATION || refused != NULL || sf_error_field(error) == NULL ||
        strcmp(sf_error_field(error), "atempt_timeout_ms") != 0) {
        fprintf(stderr, "an unknown configuration key must be refused (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    error = NULL;

    /* A call on a thread whose bound token is cancelled returns SF_RESULT_CANCELLED at once
     * (another thread would call sf_cancel_token_cancel while this one blocks). */
    token = sf_cancel_token_new();
    if (token == NULL) {
        fprintf(stderr, "sf_cancel_token_new failed\n");
        failures++;
        return;
    }
    sf_cancel_scope_enter(token);
    sf_cancel_token_cancel(token);
    result = sf_client_authenticate(client, &output, &error);
    sf_cancel_scope_exit();
    if (result != SF_RESULT_CANCELLED || output != NULL || !sf_cancel_token_is_cancelled(token)) {
        fprintf(stderr, "a cancelled scope must stop the call (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    error = NULL;
    sf_cancel_token_free(token);
    /* Outside the scope the thread's calls run again. */
    result = sf_client_authenticate(client, &output, &error);
    ok("sf_client_authenticate after the scope", result, output, error);
    error = NULL;

    /* Persistent clients: every handle for this configuration shares one runtime, connection
     * pool and token, which outlive the handles (a PHP request frees its handle at its end). */
    for (int i = 0; i < 2; i++) {
        sf_client *shared = NULL;
        result = sf_client_persistent(config, &shared, &error);
        if (result != SF_RESULT_OK) {
            report("sf_client_persistent", result, error);
            return;
        }
        result = sf_client_authenticate(shared, &output, &error);
        ok("sf_client_authenticate (persistent)", result, output, error);
        error = NULL;
        sf_client_free(shared); /* releases this handle only */
    }

    /* Logs: a callback (any thread) and a drained buffer (for hosts without threads). */
    sf_log_set_callback(on_log, NULL, 4);
    sf_log_buffer_enable(4, 256);
    result = sf_channels_list(client, &output, &error);
    ok("sf_channels_list (logged)", result, output, error);
    error = NULL;
    sf_log_set_callback(NULL, NULL, 0);
    output = sf_log_drain();
    pthread_mutex_lock(&log_lock);
    if (output == NULL || strstr(output, "storefront.request closed") == NULL || log_lines == 0 ||
        strstr(output, "sbx_merchant_secret") != NULL) {
        fprintf(stderr, "the logs must carry the request records and no secret\n");
        failures++;
    } else {
        printf("logged %d records through the callback; buffer starts %.60s...\n", log_lines, output);
    }
    pthread_mutex_unlock(&log_lock);
    sf_string_free(output);
    sf_log_buffer_enable(0, 0);
}

/* Many workers, one budget and one token (README "Rate limits"): two handles, as two php-fpm
 * or gunicorn workers would have, share a SQLite store; the second one reads the token the first
 * fetched, and sf_client_shared_state shows what the store holds (never the token). */
static void shared_state_demo(const char *config) {
    char dir[] = "/tmp/storefront-c-XXXXXX";
    char path[128];
    char shared_config[2400];
    char *output = NULL;
    sf_client *workers[2] = {NULL, NULL};
    sf_error *error = NULL;
    sf_result result;

    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "mkdtemp failed\n");
        failures++;
        return;
    }
    snprintf(path, sizeof path, "%s/storefront.db", dir);
    snprintf(shared_config, sizeof shared_config, "{\"shared_state\":\"sqlite://%s\",%s", path,
             config + 1);
    for (int i = 0; i < 2; i++) {
        result = sf_client_new(shared_config, &workers[i], &error);
        if (result != SF_RESULT_OK) {
            report("sf_client_new (shared_state)", result, error);
            error = NULL;
            goto done;
        }
        result = sf_channels_list(workers[i], &output, &error);
        ok("sf_channels_list (shared_state)", result, output, error);
        error = NULL;
    }
    result = sf_client_shared_state(workers[1], &output, &error);
    if (result != SF_RESULT_OK || output == NULL || strstr(output, "\"backend\":\"sqlite\"") == NULL ||
        strstr(output, "\"token_shared\":true") == NULL || strstr(output, "sbx_at_") != NULL) {
        fprintf(stderr, "the shared store must hold the token and both workers' reads: %s\n",
                output ? output : "(none)");
        failures++;
    } else {
        printf("shared state: %.120s...\n", output);
    }
    sf_string_free(output);
    sf_error_free(error);
done:
    sf_client_free(workers[0]);
    sf_client_free(workers[1]);
    unlink(path);
    snprintf(shared_config, sizeof shared_config, "%s-wal", path);
    unlink(shared_config);
    snprintf(shared_config, sizeof shared_config, "%s-shm", path);
    unlink(shared_config);
    rmdir(dir);
}

/* Signs a notification of payment `order` at `version` like the service and hands it to the
 * inbox as a receiver would (headers as received, the raw body bytes); returns the HTTP status
 * to answer, 0 on a failed call. */
static unsigned inbox_deliver(sf_inbox *inbox, const char *secret, const char *id, const char *order,
                              const char *status, int version, long now, int64_t *at) {
    char body[1024];
    char timestamp[32];
    char *signature = NULL;
    char *receipt = NULL;
    uint16_t http_status = 0;
    sf_error *error = NULL;
    sf_result result;
    snprintf(body, sizeof body,
             "{\"id\":\"%s\",\"type\":\"merchant_payment.status_changed\",\"api_version\":1,"
             "\"created_at\":\"2026-11-22T12:00:00Z\",\"data\":{\"order_no\":\"%s\","
             "\"external_reference\":\"ref-%s\",\"payment_no\":\"ch_card_usd\",\"amount_minor\":1250,"
             "\"currency\":\"USD\",\"currency_decimals\":2,\"status\":\"%s\",\"status_version\":%d,"
             "\"test_mode\":false,\"expires_at\":\"2026-11-22T12:30:00Z\"%s}}",
             id, order, order, status, version,
             strcmp(status, "paid") == 0 ? ",\"event_id\":\"PE-inbox-1\"" : "");
    snprintf(timestamp, sizeof timestamp, "%ld", now);
    result = sf_webhook_sign(secret, now, (const uint8_t *)body, strlen(body), &signature, &error);
    if (result != SF_RESULT_OK) {
        report("sf_webhook_sign (inbox)", result, error);
        return 0;
    }
    if (at != NULL) {
        /* On the host's own clock (here an hour later: outside the tolerance, refused). */
        result = sf_inbox_receive_at(inbox, *at, id, timestamp, signature, (const uint8_t *)body,
                                     strlen(body), &http_status, &receipt, &error);
    } else {
        result = sf_inbox_receive(inbox, id, timestamp, signature, (const uint8_t *)body, strlen(body),
                                  &http_status, &receipt, &error);
    }
    sf_string_free(signature);
    if (result != SF_RESULT_OK) {
        report("sf_inbox_receive", result, error);
        return 0;
    }
    printf("inbox answered %u: %s\n", (unsigned)http_status, receipt);
    sf_string_free(receipt);
    return http_status;
}

/* Webhook inbox (README "Webhook inbox"): the receiver stores each notification before answering
 * 2xx, a worker claims it, books it once and completes it. One SQLite file serves every receiver
 * and worker process of a host (PostgreSQL, many hosts). Open the inbox in the process that uses
 * it, after fork(), like a client. */
static void inbox_demo(void) {
    const char *secret = "whsec_inbox_0123456789abcdef0123456789ab";
    char dir[] = "/tmp/storefront-inbox-XXXXXX";
    char path[128];
    char url[160];
    char id[64];
    char claim[64];
    char *output = NULL;
    uint64_t count = 0;
    sf_inbox *inbox = NULL;
    sf_error *error = NULL;
    sf_result result;
    long now = (long)time(NULL);
    int64_t later = (int64_t)now + 3600;

    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "mkdtemp failed\n");
        failures++;
        return;
    }
    snprintf(path, sizeof path, "%s/inbox.db", dir);
    snprintf(url, sizeof url, "sqlite://%s", path);
    result = sf_inbox_open(url, "[\"whsec_inbox_0123456789abcdef0123456789ab\"]", "{\"tolerance_s\":300}",
                           &inbox, &error);
    if (result != SF_RESULT_OK) {
        report("sf_inbox_open", result, error);
        goto done;
    }
    /* Stored (200), the same notification again (200, duplicate), a delivery refused by
     * verification (400: a successful call, the answer is the receipt). */
    if (inbox_deliver(inbox, secret, "EVT-I1", "MP-I1", "paid", 2, now, NULL) != 200 ||
        inbox_deliver(inbox, secret, "EVT-I1", "MP-I1", "paid", 2, now, NULL) != 200 ||
        inbox_deliver(inbox, secret, "EVT-I9", "MP-I1", "paid", 3, now, &later) != 400) {
        fprintf(stderr, "the inbox must answer 200, 200 and 400\n");
        failures++;
    }
    /* The worker: claim, book (book is true once per payment event), complete. */
    result = sf_inbox_claim(inbox, 10, 30000, &output, &error);
    if (result != SF_RESULT_OK) {
        report("sf_inbox_claim", result, error);
        error = NULL;
    } else if (!json_field(output, "id", id, sizeof id) || !json_field(output, "claim", claim, sizeof claim) ||
               strstr(output, "\"book\":true") == NULL) {
        fprintf(stderr, "the stored notification must be claimed for booking: %s\n", output);
        failures++;
        sf_string_free(output);
    } else {
        printf("claimed %s for booking\n", id);
        sf_string_free(output);
        /* A worker whose lease ran out (another claim token) cannot complete it. */
        result = sf_inbox_complete(inbox, id, "not-my-claim", &error);
        if (result != SF_RESULT_INBOX_LEASE_LOST) {
            fprintf(stderr, "a foreign claim must not complete (got %u)\n", (unsigned)result);
            failures++;
        }
        sf_error_free(error);
        error = NULL;
        result = sf_inbox_complete(inbox, id, claim, &error);
        if (result != SF_RESULT_OK) {
            report("sf_inbox_complete", result, error);
            error = NULL;
        }
    }
    /* A second payment's event, claimed and given back (the handler failed). */
    if (inbox_deliver(inbox, secret, "EVT-I2", "MP-I2", "pending", 1, now, NULL) == 200) {
        result = sf_inbox_claim(inbox, 1, 30000, &output, &error);
        if (result != SF_RESULT_OK) {
            report("sf_inbox_claim (second)", result, error);
            error = NULL;
        } else {
            if (json_field(output, "id", id, sizeof id) && json_field(output, "claim", claim, sizeof claim)) {
                result = sf_inbox_release(inbox, id, claim, &error);
                if (result != SF_RESULT_OK) {
                    report("sf_inbox_release", result, error);
                    error = NULL;
                }
            } else {
                fprintf(stderr, "the second event must be claimed: %s\n", output);
                failures++;
            }
            sf_string_free(output);
        }
    }
    /* To complete inside your own transaction on the same database (your driver, your commit). */
    result = sf_inbox_completion_sql(inbox, &output, &error);
    if (result == SF_RESULT_OK) {
        printf("completion SQL: %.70s...\n", output);
    }
    ok("sf_inbox_completion_sql", result, output, error);
    error = NULL;
    /* A payment the reconciler found paid enters the same flow. */
    result = sf_inbox_enter_reconciled(
        inbox,
        "{\"order_no\":\"MP-I3\",\"external_reference\":\"ref-MP-I3\",\"amount_minor\":1250,"
        "\"currency\":\"USD\",\"currency_decimals\":2,\"status\":\"paid\",\"status_version\":2,"
        "\"test_mode\":false,\"expires_at\":\"2026-11-22T13:00:00Z\",\"event_id\":\"PE-I3\"}",
        &output, &error);
    if (result == SF_RESULT_OK) {
        printf("reconciled payment entered: %s\n", output);
    }
    ok("sf_inbox_enter_reconciled", result, output, error);
    error = NULL;
    result = sf_inbox_replay(inbox, "{\"event\":\"EVT-I1\"}", &count, &error);
    if (result != SF_RESULT_OK || count != 1) {
        report("sf_inbox_replay", result, error);
        error = NULL;
    } else {
        printf("replayed %llu event\n", (unsigned long long)count);
    }
    result = sf_inbox_replay(inbox, "{\"event\":\"EVT-none\"}", &count, &error);
    if (result != SF_RESULT_INBOX_NOT_FOUND) {
        fprintf(stderr, "replaying an unknown event must say so (got %u)\n", (unsigned)result);
        failures++;
    }
    sf_error_free(error);
    error = NULL;
    result = sf_inbox_status(inbox, &output, &error);
    if (result == SF_RESULT_OK) {
        printf("inbox status: %s\n", output);
    }
    ok("sf_inbox_status", result, output, error);
    error = NULL;
    result = sf_inbox_watermarks(inbox, &output, &error);
    if (result == SF_RESULT_OK) {
        printf("inbox watermarks: %.100s...\n", output);
    }
    ok("sf_inbox_watermarks", result, output, error);
    error = NULL;
    /* Retention: finished rows older than 30 days go; watermarks and bookings stay. */
    result = sf_inbox_purge(inbox, 30ULL * 24 * 3600 * 1000, &count, &error);
    if (result != SF_RESULT_OK) {
        report("sf_inbox_purge", result, error);
        error = NULL;
    } else {
        printf("purged %llu rows\n", (unsigned long long)count);
    }
done:
    sf_inbox_free(inbox);
    unlink(path);
    snprintf(url, sizeof url, "%s-wal", path);
    unlink(url);
    snprintf(url, sizeof url, "%s-shm", path);
    unlink(url);
    snprintf(url, sizeof url, "%s-journal", path);
    unlink(url);
    rmdir(dir);
}

/* The sandbox's "env" (what it prints at start) set in this process, then the configuration
 * read back with sf_config_from_env, as an application does in production and in the sandbox. */
static void env_demo(const char *ready) {
    static const char *names[] = {
        "STOREFRONT_BASE_URL", "STOREFRONT_TOKEN_ENDPOINT", "STOREFRONT_USERINFO_ENDPOINT",
        "STOREFRONT_CLIENT_ID", "STOREFRONT_CLIENT_SECRET", "STOREFRONT_SCOPES",
        "STOREFRONT_ALLOW_INSECURE_LOOPBACK", "STOREFRONT_ROOT_CA_PEM_FILE", "STOREFRONT_SHARED_STATE",
    };
    char value[1024];
    char order_no[128];
    char *config = NULL;
    char *output = NULL;
    sf_client *client = NULL;
    sf_error *error = NULL;
    sf_result result;
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        unsetenv(names[i]);
    }
    /* Without the variables: a configuration error naming the first missing one. */
    result = sf_config_from_env(&config, &error);
    if (result != SF_RESULT_CONFIG || config != NULL || error == NULL ||
        strstr(sf_error_message(error), "STOREFRONT_BASE_URL") == NULL) {
        fprintf(stderr, "sf_config_from_env without variables: expected SF_RESULT_CONFIG (got %u)\n",
                (unsigned)result);
        failures++;
    }
    sf_string_free(config);
    config = NULL;
    sf_error_free(error);
    error = NULL;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (json_field(ready, names[i], value, sizeof value)) {
            setenv(names[i], value, 1);
        }
    }
    /* The JSON holds the client secret: never log it; sf_string_free wipes it. */
    result = sf_config_from_env(&config, &error);
    if (result != SF_RESULT_OK) {
        report("sf_config_from_env", result, error);
        return;
    }
    result = sf_client_new(config, &client, &error);
    sf_string_free(config);
    if (result != SF_RESULT_OK) {
        report("sf_client_new (from env)", result, error);
        return;
    }
    result = sf_merchant_payment_create(
        client, "{\"external_reference\":\"c-from-env\",\"amount_minor\":1250,\"currency\":\"USD\"}",
        &output, &error);
    if (result != SF_RESULT_OK || !json_field(output, "order_no", order_no, sizeof order_no)) {
        report("sf_merchant_payment_create (from env)", result, error);
        sf_string_free(output);
        sf_client_free(client);
        return;
    }
    sf_string_free(output);
    result = sf_merchant_payment_get(client, order_no, &output, &error);
    if (result != SF_RESULT_OK || strstr(output, "\"external_reference\":\"c-from-env\"") == NULL) {
        report("sf_merchant_payment_get (from env)", result, error);
    } else {
        printf("configured from the environment: merchant payment %s created and read\n", order_no);
    }
    sf_string_free(output);
    sf_client_free(client);
}

int main(int argc, char **argv) {
    char origin[256];
    char config[2048];
    char *ready;
    sf_client *client = NULL;
    sf_error *error = NULL;
    sf_result result;

    if (argc != 2) {
        fprintf(stderr, "usage: %s SANDBOX_READY_FILE\n", argv[0]);
        return 2;
    }
    ready = read_file(argv[1]);
    if (ready == NULL || !json_field(ready, "origin", origin, sizeof origin)) {
        fprintf(stderr, "cannot read the sandbox ready file %s\n", argv[1]);
        free(ready);
        return 2;
    }
    printf("storefront %s against %s\n", sf_version(), origin);
    env_demo(ready);
    free(ready);

    webhook_demo();
    inbox_demo();

    snprintf(config, sizeof config,
             "{\"base_url\":\"%s/api\",\"token_endpoint\":\"%s/oauth/token\","
             "\"userinfo_endpoint\":\"%s/oauth/userinfo\",\"client_id\":\"sbx_merchant_client\","
             "\"client_secret\":\"sbx_merchant_secret_9f2c41d7a8e64b0c\",\"allow_insecure_loopback\":true,"
             "\"scopes\":[\"merchant.profile.read\",\"products.read\",\"merchant_payments.read\","
             "\"merchant_payments.create\"]}",
             origin, origin, origin);
    result = sf_client_new(config, &client, &error);
    if (result != SF_RESULT_OK) {
        report("sf_client_new", result, error);
        return 1;
    }
    catalog_demo(client, origin);
    merchant_demo(client, origin);
    argument_demo(client);
    host_demo(client, config);
    shared_state_demo(config);
    sf_client_free(client);

    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
