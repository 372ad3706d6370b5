<?php

declare(strict_types=1);

namespace Storefront;

/**
 * One page of products (Client::products(), UserSession::products()).
 *
 * Typed, read-only; properties carry the contract's names (snake_case). The array the wrapper
 * returned before is still there: $result['key'], isset(), foreach, count(), json_encode() and
 * toArray() give the contract's JSON exactly as received (nested values as arrays).
 */
final readonly class ProductPage extends Result
{
    /**
     * The products of the page (list<Product>).
     *
     * @var list<Product>
     */
    public array $list;
    /** Products in all pages. */
    public int $total;
    /** This page (from 1). */
    public int $page;
    /** Page size. */
    public int $limit;

    /** @param array<string, mixed> $data the contract's JSON object, decoded */
    public function __construct(array $data)
    {
        parent::__construct($data);
        $this->list = array_map(static fn (array $item) => new Product($item), $data['list']);
        $this->total = $data['total'];
        $this->page = $data['page'];
        $this->limit = $data['limit'];
    }
}
