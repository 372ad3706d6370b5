/* Fork safety of a SQLite inbox (issue 27, item 2): a process forks while one of its threads is
 * receiving, claiming and completing on the same inbox handle. Every child must then store its
 * own delivery (HTTP 200), never answer 503 for good because it inherited the parent's SQLite
 * lock state; the parent must keep working too.
 *
 * usage: inbox_fork DIR [CHILDREN]    (DIR: a private folder for inbox.db)
 * Prints "inbox_fork: N passed, M failed" and exits non-zero on any failure. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storefront.h"

static const char *SECRET = "whsec_fork_suite_0123456789abcdef0123456";
static atomic_int stop_busy;
static atomic_int busy_rounds;
static atomic_int busy_failures;

static void print_error(const char *what, sf_error *error) {
  fprintf(stderr, "%s: %s\n", what, error ? sf_error_message(error) : "(no detail)");
  sf_error_free(error);
}

/* One signed delivery of a paid notification for order `order`; returns the HTTP status to
 * answer, or 0 when the call itself failed. */
static unsigned deliver(const sf_inbox *inbox, const char *order) {
  char body[1024];
  char id[128];
  snprintf(id, sizeof id, "EVT-%s", order);
  snprintf(body, sizeof body,
           "{\"id\":\"%s\",\"type\":\"merchant_payment.status_changed\",\"api_version\":1,"
           "\"created_at\":\"2026-01-01T00:00:00Z\",\"data\":{\"order_no\":\"%s\","
           "\"external_reference\":\"shop-%s\",\"payment_no\":\"alipay\",\"amount_minor\":1250,"
           "\"currency\":\"CNY\",\"currency_decimals\":2,\"status\":\"paid\",\"status_version\":2,"
           "\"test_mode\":false,\"expires_at\":\"2030-01-01T00:00:00Z\",\"event_id\":\"PE-%s\","
           "\"provider_trade_no\":\"trade-%s\",\"occurred_at\":\"2026-01-01T08:00:00+08:00\"}}",
           id, order, order, order, order);
  int64_t now = (int64_t)time(NULL);
  char stamp[32];
  snprintf(stamp, sizeof stamp, "%lld", (long long)now);
  char *signature = NULL;
  sf_error *error = NULL;
  if (sf_webhook_sign(SECRET, now, (const uint8_t *)body, strlen(body), &signature, &error) !=
      SF_RESULT_OK) {
    print_error("sign", error);
    return 0;
  }
  uint16_t status = 0;
  char *receipt = NULL;
  sf_result result = sf_inbox_receive(inbox, id, stamp, signature, (const uint8_t *)body,
                                      strlen(body), &status, &receipt, &error);
  sf_string_free(signature);
  if (result != SF_RESULT_OK) {
    print_error("receive", error);
    return 0;
  }
  if (status != 200) fprintf(stderr, "[%d] %s answered %u: %s\n", (int)getpid(), order, status, receipt);
  sf_string_free(receipt);
  return status;
}

/* The parent's busy thread: receive, claim and complete in a loop, so that a fork often lands
 * inside one of the inbox's SQLite transactions. */
static void *busy(void *arg) {
  const sf_inbox *inbox = arg;
  for (int i = 0; !atomic_load(&stop_busy); i++) {
    char order[64];
    snprintf(order, sizeof order, "P%d-%d", (int)getpid(), i);
    if (deliver(inbox, order) != 200) atomic_fetch_add(&busy_failures, 1);
    char *events = NULL;
    sf_error *error = NULL;
    if (sf_inbox_claim(inbox, 4, 30000, &events, &error) != SF_RESULT_OK) {
      print_error("claim", error);
      atomic_fetch_add(&busy_failures, 1);
      continue;
    }
    /* Complete every claimed event: the id and claim strings are read from the JSON array. */
    for (const char *p = events; (p = strstr(p, "{\"id\":\"")) != NULL;) {
      char eid[128] = {0}, claim[128] = {0};
      if (sscanf(p, "{\"id\":\"%127[^\"]\",\"claim\":\"%127[^\"]\"", eid, claim) != 2) break;
      if (sf_inbox_complete(inbox, eid, claim, &error) != SF_RESULT_OK) {
        print_error("complete", error);
        error = NULL;
        atomic_fetch_add(&busy_failures, 1);
      }
      p += 7;
    }
    sf_string_free(events);
    atomic_fetch_add(&busy_rounds, 1);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [CHILDREN]\n", argv[0]);
    return 2;
  }
  int children = argc > 2 ? atoi(argv[2]) : 25;
  char url[4096];
  snprintf(url, sizeof url, "sqlite://%s/inbox.db", argv[1]);
  char secrets[128];
  snprintf(secrets, sizeof secrets, "[\"%s\"]", SECRET);
  sf_inbox *inbox = NULL;
  sf_error *error = NULL;
  if (sf_inbox_open(url, secrets, NULL, &inbox, &error) != SF_RESULT_OK) {
    print_error("open", error);
    return 1;
  }
  int passed = 0, failed = 0;
  /* The parent uses the inbox before the thread starts and before any fork. */
  if (deliver(inbox, "parent-first") == 200) passed++; else failed++;
  pthread_t thread;
  pthread_create(&thread, NULL, busy, inbox);
  while (atomic_load(&busy_rounds) < 2) usleep(1000);
  for (int i = 0; i < children; i++) {
    /* Land the fork at a different point of the busy thread's transaction each time. */
    usleep((useconds_t)(rand() % 3000));
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      alarm(60); /* a hung child is killed (SIGALRM) and counted as failed */
      char order[64];
      snprintf(order, sizeof order, "child-%d", i);
      unsigned first = deliver(inbox, order);
      /* The service delivers again after a 503: a child must not be locked out for good. */
      snprintf(order, sizeof order, "child-%d-b", i);
      unsigned second = deliver(inbox, order);
      _exit(first == 200 && second == 200 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      passed++;
    } else {
      failed++;
      fprintf(stderr, "child %d failed (%s %d)\n", i, WIFSIGNALED(status) ? "signal" : "exit",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
  }
  atomic_store(&stop_busy, 1);
  pthread_join(thread, NULL);
  if (atomic_load(&busy_failures) == 0) passed++; else {
    failed++;
    fprintf(stderr, "the parent's busy thread saw %d failures\n", atomic_load(&busy_failures));
  }
  /* Every child's two deliveries are in the database, as the parent sees it. */
  char *status_json = NULL;
  if (sf_inbox_status(inbox, &status_json, &error) != SF_RESULT_OK) {
    print_error("status", error);
    failed++;
  } else {
    /* The busy thread's events were claimed and completed (it did work through the forks). */
    const char *completed = strstr(status_json, "\"completed\":");
    if (completed && atoi(completed + 12) > 0) passed++; else {
      failed++;
      fprintf(stderr, "nothing completed: %s\n", status_json);
    }
    sf_string_free(status_json);
  }
  if (deliver(inbox, "parent-last") == 200) passed++; else failed++;
  sf_inbox_free(inbox);
  printf("inbox_fork: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
