//! `sf_reconcile`: the reconciler ([`crate::reconcile`]) over the C ABI, JSON in and JSON lines
//! out, in batches that resume from the cursor carried in the input.
//!
//! Contract rules (see the core module): notifications complement periodic reconciliation; only
//! `paid` is payment, an unknown status is never paid; reads stay within the shared read budget
//! (the client's rate limiter paces them) and re-queues within the re-queue budget. A batch
//! changes nothing at the service except the optional re-queue, so it is safe to repeat.
//!
//! Why batches rather than a callback per line: the PHP and Python wrappers expose the reports
//! as generators, which cannot yield from inside a C callback; a call that returns the next few
//! reports and a cursor lets them yield between calls, stop anywhere, and resume later.

use std::ffi::c_char;

use futures_util::StreamExt;
use serde::Deserialize;

use crate::reconcile::{LocalRecord, ReconcileCursor, ReconcileOptions, ReconcileWindow};
use crate::{ReconcileReport, Reconciler};

use super::boundary;
use super::client::{client_arg, sf_client};
use super::error::{Failure, sf_error};
use super::io::{OutString, json_arg};
use super::result::sf_result;

/// The input object of `sf_reconcile` (strict: unknown keys are refused).
#[derive(Deserialize)]
struct Input {
    /// The shop's records, in the order reports are wanted.
    records: Vec<LocalRecord>,
    /// Options, all optional.
    #[serde(default)]
    options: Options,
}

/// `options` of the input: the core's [`ReconcileOptions`] plus the cursor to resume after.
#[derive(Deserialize, Default)]
struct Options {
    #[serde(default)]
    requeue_failed: bool,
    #[serde(default)]
    window: Option<ReconcileWindow>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    cursor: Option<ReconcileCursor>,
}

impl Options {
    fn split(self) -> (ReconcileOptions, Option<ReconcileCursor>) {
        let defaults = ReconcileOptions::default();
        let options = ReconcileOptions {
            requeue_failed: self.requeue_failed,
            window: self.window,
            limit: self.limit.unwrap_or(defaults.limit),
        };
        (options, self.cursor)
    }
}

/// Reconciles the shop's records against the service: one report per record, in order, for at
/// most `max_reports` records after the cursor (0 = every remaining record).
///
/// `input_json` is `{"records": [record...], "options"?: {...}}`. A record is
/// `{"external_reference", "order_no"?, "expected_amount" (minor units), "currency",
/// "test_mode"?, "booked_status_version"?, "booked_event_id"?}` (`booked_event_id` set means
/// "booked as paid"). Options: `"requeue_failed"` (re-queue `failed` notification deliveries of
/// payments found paid but not booked; default false), `"window": {"from"?, "to"?}` (RFC 3339
/// bounds on `expires_at` for lookups by reference), `"limit"` (1 to 100, default 100), and
/// `"cursor": {"next_index", "last_reference"?}` (resume after the record the cursor names: pass
/// the `cursor` of the last report received). Strict: an unknown key at any depth gives
/// `SF_RESULT_VALIDATION` naming its path; a cursor that does not fit the records, or a limit
/// outside 1 to 100, gives `SF_RESULT_VALIDATION` before any request.
///
/// On success `*lines_out` receives JSON lines, one report per record, each ending in `\n`
/// (an empty string when no record is left): `{"record", "index", "order_no"?, "finding":
/// {"finding": "in_agreement" | "paid_not_booked" | "booked_not_paid" | "mismatch" |
/// "under_review" | "unknown_status" | "missing_at_service" | "ambiguous" | "lookup_failed",
/// ...its fields}, "service_status_version"?, "requeued", "requeue_error"?, "cursor"}`. Owned by
/// the caller (free with `sf_string_free`). A failed lookup is a `lookup_failed` report, not a
/// failure of the call.
///
/// Cancellable with the thread's `sf_cancel_token` (see `sf_cancel_scope_enter`): the batch then
/// returns `SF_RESULT_CANCELLED` and its reports are not handed out; resume from the last cursor
/// received (the records of the cancelled batch are looked up again; a delivery already
/// re-queued is no longer `failed`, so it is not re-queued twice).
///
/// # Safety
/// `client` NULL or live; `input_json` NULL or NUL-terminated; out-pointers NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sf_reconcile(
    client: *const sf_client,
    input_json: *const c_char,
    max_reports: u32,
    lines_out: *mut *mut c_char,
    error_out: *mut *mut sf_error,
) -> sf_result {
    boundary::call(error_out, || {
        let out = OutString::new(lines_out, "lines_out")?;
        // SAFETY: caller contract of this export.
        let client = unsafe { client_arg(client) }?;
        // SAFETY: caller contract of this export.
        let input: Input = unsafe { json_arg(input_json, "input_json") }?;
        let (options, cursor) = input.options.split();
        let reconciler = Reconciler::new(client.core()?, options);
        let stream = reconciler.reconcile(input.records, cursor)?;
        let take = match max_reports {
            0 => usize::MAX,
            n => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let reports: Vec<ReconcileReport> =
            client.run(async move { Ok::<_, crate::Error>(stream.take(take).collect().await) })?;
        let mut lines = String::new();
        for report in &reports {
            let line = serde_json::to_string(report).map_err(|e| {
                Failure::new(sf_result::Other, format!("cannot encode report: {e}"))
            })?;
            lines.push_str(&line);
            lines.push('\n');
        }
        out.write_string(lines)
    })
}

#[cfg(test)]
mod tests {
    //! `sf_reconcile` called as C calls it, against the in-process sandbox: findings record by
    //! record, batches resumed from the cursor, strict input, cancellation.

    use std::ffi::{CStr, CString};
    use std::ptr;

    use serde_json::{Value, json};
    use storefront_sandbox::seed;

    use super::super::cancel::*;
    use super::super::client::sf_client_free;
    use super::super::collection::sf_merchant_payment_create;
    use super::super::io::sf_string_free;
    use super::super::tests_abi::{Env, error_json, take};
    use super::*;

    /// One `sf_reconcile` call: the reports, or the result code and error JSON.
    fn batch(
        client: *const sf_client,
        input: &Value,
        max: u32,
    ) -> Result<Vec<Value>, (sf_result, Value)> {
        let input = CString::new(input.to_string()).unwrap();
        let mut out = ptr::null_mut();
        let mut error = ptr::null_mut();
        match unsafe { sf_reconcile(client, input.as_ptr(), max, &mut out, &mut error) } {
            sf_result::Ok => {
                let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
                unsafe { sf_string_free(out) };
                assert!(text.is_empty() || text.ends_with('\n'), "{text}");
                Ok(text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect())
            }
            code => Err((code, error_json(error).unwrap())),
        }
    }

    fn create(client: *const sf_client, reference: &str, amount: u64) -> String {
        let request = CString::new(
            json!({"external_reference": reference, "amount_minor": amount, "currency": "USD"})
                .to_string(),
        )
        .unwrap();
        let mut out = ptr::null_mut();
        let mut error = ptr::null_mut();
        let result =
            unsafe { sf_merchant_payment_create(client, request.as_ptr(), &mut out, &mut error) };
        assert_eq!(result, sf_result::Ok, "{:?}", error_json(error));
        take(out)["order_no"].as_str().unwrap().to_owned()
    }

    fn record(reference: &str, amount: u64) -> Value {
        json!({"external_reference": reference, "expected_amount": amount, "currency": "USD"})
    }

    /// Findings against the sandbox's state, in batches of two resumed from the last report's
    /// cursor (the union equals one full run); strict input and a bad cursor are refused before
    /// any request; a cancelled scope stops the call.
    #[test]
    fn reconcile_in_batches_through_the_c_abi() {
        let env = Env::start();
        let client = env.client();
        let paid = create(client, "c-rec-paid", 200);
        env.control(
            &format!("/merchant-payments/{paid}/checkout/pay"),
            json!({"payment_no": seed::CHANNEL_CARD_USD}),
        );
        let review = create(client, "c-rec-review", 100);
        env.control(
            &format!("/merchant-payments/{review}/force"),
            json!({"status": "review"}),
        );
        create(client, "c-rec-pending", 100);
        let records = json!([
            record("c-rec-paid", 200),
            record("c-rec-pending", 100),
            record("c-rec-missing", 100),
            record("c-rec-review", 100),
            record("c-rec-paid", 300),
            {"external_reference": "c-rec-paid", "order_no": paid, "expected_amount": 200,
             "currency": "USD", "booked_event_id": "pev_other"},
        ]);
        let full = batch(client, &json!({"records": records}), 0).unwrap();
        let names: Vec<&str> = full
            .iter()
            .map(|r| r["finding"]["finding"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "paid_not_booked",
                "in_agreement",
                "missing_at_service",
                "under_review",
                "mismatch",
                "mismatch"
            ]
        );
        assert_eq!(full[0]["order_no"], json!(paid));
        assert_eq!(full[0]["finding"]["payment"]["status"], "paid");
        assert_eq!(full[4]["finding"]["field"], "amount");
        assert_eq!(full[5]["finding"]["field"], "event_id");
        assert_eq!(full[5]["finding"]["expected"], "pev_other");

        // Batches of two, each resumed from the cursor of the last report received.
        let mut joined = Vec::new();
        let mut options = json!({});
        loop {
            let got = batch(client, &json!({"records": records, "options": options}), 2).unwrap();
            let Some(last) = got.last() else { break };
            assert!(got.len() <= 2);
            options = json!({"cursor": last["cursor"]});
            joined.extend(got);
        }
        assert_eq!(joined, full);

        // Strict input: unknown keys by path, a cursor of another list, a limit out of range.
        let (code, error) = batch(
            client,
            &json!({"records": [{"external_reference": "x", "expected_amount": 1,
                     "currency": "USD", "booked_eventid": "e"}]}),
            0,
        )
        .unwrap_err();
        assert_eq!(code, sf_result::Validation);
        assert_eq!(error["field"], "records[0].booked_eventid");
        let (code, error) = batch(
            client,
            &json!({"records": [], "options": {"requeue": true}}),
            0,
        )
        .unwrap_err();
        assert_eq!(code, sf_result::Validation);
        assert_eq!(error["field"], "options.requeue");
        let wrong = json!({"records": records, "options": {"cursor":
            {"next_index": 2, "last_reference": "c-rec-review"}}});
        let (code, error) = batch(client, &wrong, 0).unwrap_err();
        assert_eq!(code, sf_result::Validation);
        assert_eq!(error["field"], "cursor");
        let (code, _) = batch(
            client,
            &json!({"records": records, "options": {"limit": 0}}),
            0,
        )
        .unwrap_err();
        assert_eq!(code, sf_result::Validation);

        // Cancellation: a cancelled token bound to this thread stops the call.
        let token = sf_cancel_token_new();
        unsafe {
            sf_cancel_token_cancel(token);
            sf_cancel_scope_enter(token);
        }
        let cancelled = batch(client, &json!({"records": records}), 0);
        sf_cancel_scope_exit();
        unsafe { sf_cancel_token_free(token) };
        assert_eq!(cancelled.unwrap_err().0, sf_result::Cancelled);
        unsafe { sf_client_free(client) };
    }
}
