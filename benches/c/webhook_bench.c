/*
 * Webhook verification through the C ABI, 700-byte notification (the body of
 * benches/webhook.rs), one run, interleaved rounds:
 *
 *   verify_at       sf_webhook_verify_at: verifies, decodes data, re-encodes the notification
 *                   as JSON for the caller, who frees it (sf_string_free)
 *   verify_body_at  sf_webhook_verify_body_at: verifies signature and envelope over the
 *                   caller's buffer, hands nothing back (the caller decodes its own bytes)
 *   call floor      sf_status_version_decision: the cheapest export, the cost of a call through
 *                   the ABI and its panic boundary
 *
 * Usage: webhook_bench [ROUNDS] [ITERATIONS]. Each round runs every configuration in turn
 * (rotating the order), ITERATIONS calls each, timed in samples of SAMPLE calls on the thread's
 * CPU clock (CLOCK_THREAD_CPUTIME_ID: time the process spends descheduled on a loaded machine
 * is not counted); the figure is the median over all samples of the time per call, as divan
 * reports for the Rust benches. benches/c/run.sh builds and runs it beside the Rust figures
 * (cargo bench --bench webhook) of the same session.
 */
#define _POSIX_C_SOURCE 199309L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storefront.h"

#define SECRET "bench-notify-secret-0123456789abcdef0123"
#define EVENT_ID "evt_2f6b8c1d9e0a4b7c8d1e2f3a4b5c6d7e"
#define NOW INT64_C(1790000000)

#define SAMPLE 100

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static void fail(const char *what, sf_result result, sf_error *error) {
  fprintf(stderr, "%s failed: %u %s\n", what, (unsigned)result,
          error ? sf_error_message(error) : "");
  exit(1);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 30;
  long iterations = argc > 2 ? atol(argv[2]) : 20000;
  if (rounds < 1 || iterations < 1) {
    fprintf(stderr, "usage: %s [ROUNDS] [ITERATIONS]\n", argv[0]);
    return 2;
  }

  /* The notification of benches/webhook.rs, padded to exactly 700 bytes. */
  const char *head =
      "{\"id\":\"" EVENT_ID "\",\"type\":\"merchant_payment.status_changed\",\"api_version\":1,"
      "\"created_at\":\"2026-09-21T10:00:05Z\",\"data\":{\"order_no\":\"202609211000000000042\","
      "\"external_reference\":\"shop-order-1001\",\"payment_no\":\"ch_card_usd\",\"amount_minor\":1250,"
      "\"currency\":\"USD\",\"currency_decimals\":2,\"status\":\"paid\",\"status_version\":2,"
      "\"test_mode\":false,\"expires_at\":\"2026-09-21T10:30:00Z\","
      "\"event_id\":\"pe_b093a5293d502f614e47126f\",\"provider_trade_no\":\"PT-";
  const char *tail = "\",\"occurred_at\":\"2026-09-21T10:01:00+00:00\"}}";
  char body[701];
  size_t pad = 700 - strlen(head) - strlen(tail);
  snprintf(body, sizeof body, "%s%.*s%s", head, (int)pad,
           "777777777777777777777777777777777777777777777777777777777777777777777777777777777777777"
           "777777777777777777777777777777777777777777777777777777777777777777777777777777777777777"
           "777777777777777777777777777777777777777777777777777777777777777777777777777777777777777"
           "777777777777777777777777777777777777777777777777777777777777777777777777777777777777777",
           tail);
  size_t body_len = strlen(body);
  if (body_len != 700) {
    fprintf(stderr, "body is %zu bytes, not 700\n", body_len);
    return 1;
  }

  sf_error *error = NULL;
  sf_webhook_verifier *verifier = NULL;
  sf_result r = sf_webhook_verifier_new("[\"" SECRET "\"]", &verifier, &error);
  if (r != SF_RESULT_OK) fail("sf_webhook_verifier_new", r, error);
  char *signature = NULL;
  r = sf_webhook_sign(SECRET, NOW, (const uint8_t *)body, body_len, &signature, &error);
  if (r != SF_RESULT_OK) fail("sf_webhook_sign", r, error);
  char timestamp[32];
  snprintf(timestamp, sizeof timestamp, "%" PRId64, NOW);

  long samples_per_round = iterations / SAMPLE > 0 ? iterations / SAMPLE : 1;
  size_t total = (size_t)rounds * (size_t)samples_per_round;
  double *at = calloc(total, sizeof *at);
  double *body_only = calloc(total, sizeof *body_only);
  double *floor_ns = calloc(total, sizeof *floor_ns);
  volatile unsigned sink = 0;
  size_t filled = 0;
  for (int round = 0; round < rounds; round++) {
    for (int k = 0; k < 3; k++) {
      int which = (round + k) % 3; /* rotate the order each round */
      double *out = which == 0 ? at : which == 1 ? body_only : floor_ns;
      for (long s = 0; s < samples_per_round; s++) {
        double start = now_ns();
        for (long i = 0; i < SAMPLE; i++) {
          if (which == 0) {
            char *json = NULL;
            r = sf_webhook_verify_at(verifier, EVENT_ID, timestamp, signature,
                                     (const uint8_t *)body, body_len, NOW, &json, NULL);
            if (r != SF_RESULT_OK) fail("sf_webhook_verify_at", r, NULL);
            sink += (unsigned char)json[0];
            sf_string_free(json);
          } else if (which == 1) {
            r = sf_webhook_verify_body_at(verifier, EVENT_ID, timestamp, signature,
                                          (const uint8_t *)body, body_len, NOW, NULL);
            if (r != SF_RESULT_OK) fail("sf_webhook_verify_body_at", r, NULL);
            sink += r;
          } else {
            sink += sf_status_version_decision((int64_t)(i & 7), 3);
          }
        }
        out[filled + (size_t)s] = (now_ns() - start) / SAMPLE;
      }
    }
    filled += (size_t)samples_per_round;
  }
  double m_at = median(at, (int)total), m_body = median(body_only, (int)total),
         m_floor = median(floor_ns, (int)total);
  printf("C ABI, %s; %d interleaved rounds x %ld calls; median over samples of %d calls, "
         "thread CPU time\n",
         sf_version(), rounds, samples_per_round * SAMPLE, SAMPLE);
  printf("  sf_webhook_verify_at       %8.0f ns  (verify + decode + JSON out + free)\n", m_at);
  printf("  sf_webhook_verify_body_at  %8.0f ns  (verify signature + envelope, nothing out)\n",
         m_body);
  printf("  call floor                 %8.0f ns  (sf_status_version_decision)\n", m_floor);
  printf("  verify_at / verify_body_at %8.2fx\n", m_at / m_body);
  printf("C_VERIFY_AT_NS=%.0f C_VERIFY_BODY_AT_NS=%.0f C_FLOOR_NS=%.0f\n", m_at, m_body, m_floor);
  sf_string_free(signature);
  sf_webhook_verifier_free(verifier);
  free(at);
  free(body_only);
  free(floor_ns);
  return sink == 0xFFFFFFFFu; /* keeps the calls' results observable */
}
