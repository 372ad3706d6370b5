package dev.storefront

import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/**
 * The reconciler: the shop's own booking [records] against the service's merchant payments, as
 * a cold [Flow] of one [ReconcileReport] per record, in order. Each record is looked up as the
 * collector consumes reports (by `orderNo` when the record has one, else by the filtered list by
 * `externalReference`, within [ReconcileOptions.window]); every collection starts a new run.
 *
 * Findings ([ReconcileFinding]): `InAgreement`; `PaidNotBooked` (book `eventId` once);
 * `BookedNotPaid` (refunded, chargeback, review, expired or pending at the service); `Mismatch`
 * (reference, amount, currency, test mode, status version or event id, checked before a payment
 * is offered for booking); `UnderReview`; `UnknownStatus` (never paid); `MissingAtService`;
 * `Ambiguous`; `LookupFailed` (the run goes on). Lookups use the shared read budget and
 * re-queues ([ReconcileOptions.requeueFailed]) the re-queue budget, paced by the client's rate
 * limiter. A run changes nothing at the service except that optional re-queue: safe to repeat
 * every few minutes.
 *
 * Resumable: stop collecting anywhere (`take(n)`, cancellation) and continue later with
 * `options.copy(cursor = lastReport.cursor)`. Cancelling the collector stops the lookup in
 * flight; a bad cursor, limit, amount or version throws [StorefrontException.Validation] when
 * collection starts, before any request.
 */
fun Client.reconcile(
    records: List<LocalRecord>,
    options: ReconcileOptions = ReconcileOptions(),
): Flow<ReconcileReport> = flow {
    reconcileRun(records, options).use { run -> while (true) emit(run.next() ?: break) }
}
