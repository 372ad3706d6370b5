<?php

declare(strict_types=1);

namespace Storefront;

/**
 * An order creation or payment start may have been processed; it was not re-sent. Follow
 * advice(): after an order creation do not order again (no order list exists; lookup() holds
 * gd_no, quantity, payment_no); after a payment start poll the status of lookup()['order_no'].
 */
class OutcomeUnknownException extends StorefrontException
{
}
