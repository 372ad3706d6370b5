<?php

declare(strict_types=1);

namespace Storefront;

/**
 * The `other_ipu` form of one product (like the core's OtherIpuForm): fields() to ask the buyer
 * for, in configuration order, and build() to turn the answers into the order's other_ipu.
 * Parsing and checks are the core's (sf_other_ipu_fields, sf_other_ipu_build); a malformed
 * entry is a ValidationException with field `other_ipu_cnf`, a refused value one with field
 * `other_ipu.<key>` (a label used as key, a required value missing).
 */
final class OtherIpuForm
{
    /** @var array<string, mixed> */
    private array $product;
    /** @var list<OtherIpuField> */
    private array $fields = [];

    /** @param Product|array<string, mixed> $product a product as listed */
    public function __construct(Product|array $product)
    {
        $product = $product instanceof Product ? $product->toArray() : $product;
        $this->product = $product;
        $listed = Library::callJson('sf_other_ipu_fields', Library::toJson($product, 'product_json'));
        foreach ($listed['items'] as $field) {
            $this->fields[] = new OtherIpuField((string) $field['key'], (string) $field['label'], (bool) $field['required']);
        }
    }

    /**
     * Every extra input, in configuration order (none when the product has no other_ipu_cnf).
     *
     * @return list<OtherIpuField>
     */
    public function fields(): array
    {
        return $this->fields;
    }

    /**
     * The inputs that need a value.
     *
     * @return list<OtherIpuField>
     */
    public function required(): array
    {
        return array_values(array_filter($this->fields, fn (OtherIpuField $f) => $f->required));
    }

    /**
     * The checked other_ipu for $values keyed by field key (blank optional values left out).
     *
     * @param array<string, string> $values
     * @return array<string, string>
     */
    public function build(array $values): array
    {
        return Library::callJson('sf_other_ipu_build', Library::toJson($this->product, 'product_json'), Library::toJson((object) $values, 'values_json'));
    }
}
