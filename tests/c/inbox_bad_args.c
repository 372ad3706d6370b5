/* Hostile arguments across the inbox's C ABI (issue 27: what the review found holding, kept):
 * NULL handles and out-pointers, invalid UTF-8 in every string, a NULL body with a length.
 * Each call must fail with its own result code (never crash, never write through NULL), and
 * the inbox must work afterwards. Built with -fsanitize=address,undefined by suite 30-c.
 *
 * usage: inbox_bad_args DIR     Prints "inbox_bad_args: N passed, M failed". */
#include <stdio.h>
#include <string.h>

#include "storefront.h"

static int passed, failed;

/* Runs CALL (which writes `error`) and checks its result; a failure must come with an error. */
#define CHECK(what, want, call)                                                                   \
  do {                                                                                            \
    error = NULL;                                                                                 \
    sf_result got_ = (call);                                                                      \
    expect((what), got_, (want), error);                                                          \
  } while (0)

static void expect(const char *what, sf_result got, sf_result want, sf_error *error) {
  if (got == want && (got == SF_RESULT_OK || error != NULL)) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "%s: result %d (expected %d), error %s\n", what, (int)got, (int)want,
            error ? sf_error_message(error) : "none");
  }
  sf_error_free(error);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  static const char bad_utf8[] = {'s', 'q', 'l', (char)0xC3, (char)0x28, 0};
  char url[4096];
  snprintf(url, sizeof url, "sqlite://%s/inbox.db", argv[1]);
  const char *secrets = "[\"whsec_bad_args_0123456789abcdef0123456\"]";
  sf_inbox *inbox = NULL;
  sf_error *error = NULL;

  CHECK("open NULL url", SF_RESULT_NULL_ARGUMENT,
        sf_inbox_open(NULL, secrets, NULL, &inbox, &error));
  CHECK("open invalid UTF-8 url", SF_RESULT_INVALID_UTF8,
        sf_inbox_open(bad_utf8, secrets, NULL, &inbox, &error));
  CHECK("open invalid UTF-8 secrets", SF_RESULT_INVALID_UTF8,
        sf_inbox_open(url, bad_utf8, NULL, &inbox, &error));
  CHECK("open NULL out", SF_RESULT_NULL_ARGUMENT, sf_inbox_open(url, secrets, NULL, NULL, &error));
  CHECK("open", SF_RESULT_OK, sf_inbox_open(url, secrets, NULL, &inbox, &error));

  uint16_t status = 0;
  char *receipt = NULL;
  const uint8_t body[] = "{}";
  CHECK("receive NULL inbox", SF_RESULT_NULL_ARGUMENT,
        sf_inbox_receive(NULL, "e", "1", "s", body, 2, &status, &receipt, &error));
  CHECK("receive NULL body with a length", SF_RESULT_NULL_ARGUMENT,
        sf_inbox_receive(inbox, "e", "1", "s", NULL, 5, &status, &receipt, &error));
  CHECK("receive invalid UTF-8 header", SF_RESULT_INVALID_UTF8,
        sf_inbox_receive(inbox, bad_utf8, "1", "s", body, 2, &status, &receipt, &error));
  CHECK("receive NULL status out", SF_RESULT_NULL_ARGUMENT,
        sf_inbox_receive(inbox, "e", "1", "s", body, 2, NULL, &receipt, &error));
  CHECK("complete NULL id", SF_RESULT_NULL_ARGUMENT, sf_inbox_complete(inbox, NULL, "c", &error));
  CHECK("complete invalid UTF-8 claim", SF_RESULT_INVALID_UTF8,
        sf_inbox_complete(inbox, "i", bad_utf8, &error));
  CHECK("release NULL inbox", SF_RESULT_NULL_ARGUMENT, sf_inbox_release(NULL, "i", "c", &error));
  char *json = NULL;
  uint64_t replayed = 0;
  CHECK("claim NULL out", SF_RESULT_NULL_ARGUMENT, sf_inbox_claim(inbox, 1, 1000, NULL, &error));
  CHECK("status NULL inbox", SF_RESULT_NULL_ARGUMENT, sf_inbox_status(NULL, &json, &error));
  CHECK("replay invalid UTF-8", SF_RESULT_INVALID_UTF8,
        sf_inbox_replay(inbox, bad_utf8, &replayed, &error));
  /* A NULL error pointer is allowed: the result alone tells. */
  if (sf_inbox_status(NULL, &json, NULL) == SF_RESULT_NULL_ARGUMENT) passed++; else failed++;

  /* The inbox still works: an unsigned delivery is answered 400, and status reads. */
  CHECK("receive unsigned", SF_RESULT_OK,
        sf_inbox_receive(inbox, NULL, NULL, NULL, body, 2, &status, &receipt, &error));
  if (status == 400) passed++; else { failed++; fprintf(stderr, "unsigned answered %u\n", status); }
  sf_string_free(receipt);
  CHECK("status", SF_RESULT_OK, sf_inbox_status(inbox, &json, &error));
  sf_string_free(json);
  sf_inbox_free(inbox);
  sf_inbox_free(NULL);
  printf("inbox_bad_args: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
