<?php

declare(strict_types=1);

namespace Storefront;

/**
 * One extra input of a product, parsed by the core from `other_ipu_cnf` (`key=label=flag`).
 * Contract: "the JSON key used in `other_ipu` is the key part, never the label"; flag 1 marks a
 * required input.
 */
final class OtherIpuField
{
    /** The key to use in other_ipu (never the label). */
    public readonly string $key;
    /** Display text for the input. */
    public readonly string $label;
    /** Whether the order needs a non-blank value for it. */
    public readonly bool $required;

    public function __construct(string $key, string $label, bool $required)
    {
        $this->key = $key;
        $this->label = $label;
        $this->required = $required;
    }
}
