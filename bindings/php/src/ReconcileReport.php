<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The reconciler's result for one of the shop's records (see Client::reconcile()).
 *
 * $finding is the stable snake_case name of what was found: in_agreement, paid_not_booked (book
 * $details['event_id'] once), booked_not_paid ($details['status']: refunded, chargeback, review,
 * expired or pending), mismatch ($details['field']: external_reference, amount, currency,
 * test_mode, status_version or event_id, with 'expected' and 'actual' as text), under_review,
 * unknown_status ($details['status'] as sent; never paid), missing_at_service, ambiguous
 * ($details['order_nos'], newest first) or lookup_failed ($details['error']: kind, code?,
 * http_status?, message). $details holds the finding's fields, with the payment as queried
 * under 'payment' where one was found. Amounts are integers (minor units), never floats.
 */
final class ReconcileReport
{
    /**
     * @param array<string, mixed> $details
     * @param array<string, mixed>|null $requeueError
     * @param array{next_index: int, last_reference?: string} $cursor
     */
    public function __construct(
        /** The record's external_reference. */
        public readonly string $record,
        /** The record's position in the records given. */
        public readonly int $index,
        /** The payment number the finding is about, when one payment was found. */
        public readonly ?string $orderNo,
        /** The finding's name (see the class comment). */
        public readonly string $finding,
        /** The finding's fields. */
        public readonly array $details,
        /** The service's status_version of that payment, when one was found. */
        public readonly ?int $serviceStatusVersion,
        /** Failed notification deliveries re-queued for this payment (requeue_failed only). */
        public readonly int $requeued,
        /** Why listing or re-queuing deliveries failed, if it did. */
        public readonly ?array $requeueError,
        /** Pass it as the `cursor` option to resume after this record. */
        public readonly array $cursor,
    ) {
    }

    /**
     * One JSON line of sf_reconcile, decoded.
     *
     * @param array<string, mixed> $line
     */
    public static function fromArray(array $line): self
    {
        $details = $line['finding'];
        $name = (string) $details['finding'];
        unset($details['finding']);
        return new self(
            (string) $line['record'],
            (int) $line['index'],
            $line['order_no'] ?? null,
            $name,
            $details,
            isset($line['service_status_version']) ? (int) $line['service_status_version'] : null,
            (int) $line['requeued'],
            $line['requeue_error'] ?? null,
            $line['cursor'],
        );
    }
}
