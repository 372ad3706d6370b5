<?php

declare(strict_types=1);

namespace Storefront;

/**
 * Base of the typed results (MerchantPayment, CreatedMerchantPayment, Channel,
 * NotificationRecord, Product, ProductPage, CatalogOrder, MerchantProfile, Userinfo,
 * PaymentStart, VerifiedNotification): PHP 8.2 readonly value objects whose public properties
 * carry the contract's names (snake_case, as the service's JSON spells them: `order_no`,
 * `amount_minor`), typed (nested results are objects, lists are lists of them).
 *
 * The arrays of earlier versions stay available, unchanged: array access (`$payment['status']`,
 * `isset($payment['event_id'])`), foreach, count() and json_encode() work on the contract's
 * JSON object exactly as the library returned it, nested values as arrays, and toArray()
 * returns it. Money stays exact: minor units and eight-decimal amounts are ints
 * (settlement_coin, a string in the contract, stays a string), never floats. Read-only: setting
 * or unsetting an offset throws \LogicException.
 *
 * @implements \ArrayAccess<string, mixed>
 * @implements \IteratorAggregate<string, mixed>
 */
abstract readonly class Result implements \ArrayAccess, \IteratorAggregate, \Countable, \JsonSerializable
{
    /** @var array<string, mixed> */
    private array $data;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        $this->data = $data;
    }

    /**
     * The contract's JSON object as the library returned it (what the method returned before
     * typed results).
     *
     * @return array<string, mixed>
     */
    public function toArray(): array
    {
        return $this->data;
    }

    /** @param mixed $offset */
    public function offsetExists($offset): bool
    {
        return isset($this->data[$offset]);
    }

    /**
     * @param mixed $offset
     * @return mixed
     */
    public function offsetGet($offset): mixed
    {
        if (!array_key_exists($offset, $this->data)) {
            trigger_error('Undefined array key "' . $offset . '"', E_USER_WARNING);
            return null;
        }
        return $this->data[$offset];
    }

    /**
     * @param mixed $offset
     * @param mixed $value
     */
    public function offsetSet($offset, $value): void
    {
        throw new \LogicException(static::class . ' is read-only');
    }

    /** @param mixed $offset */
    public function offsetUnset($offset): void
    {
        throw new \LogicException(static::class . ' is read-only');
    }

    /** @return \ArrayIterator<string, mixed> */
    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->data);
    }

    public function count(): int
    {
        return count($this->data);
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->data;
    }

    /**
     * Objects for a list of JSON objects.
     *
     * @internal
     * @param list<array<string, mixed>> $items
     * @return list<static>
     */
    public static function listOf(array $items): array
    {
        return array_map(static fn (array $item) => new static($item), $items);
    }
}
