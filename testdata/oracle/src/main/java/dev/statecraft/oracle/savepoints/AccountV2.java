package dev.statecraft.oracle.savepoints;

import java.util.Objects;

/**
 * {@link Account} after a schema change that drops {@code version} and adds {@code tier} (type
 * name "AccountV2" in expectations). It is a different class on purpose: a POJO serializer
 * snapshot names its class, and Flink refuses to restore one class's state into another, so an
 * expectation declaring AccountV2 accepts only a savepoint whose snapshot was rewritten to this
 * class and whose values carry exactly these fields. JSON: {"balance": long, "owner": string,
 * "tier": string}; a null String field is JSON null.
 */
public class AccountV2 {
    public String owner;
    public long balance;
    public String tier;

    public AccountV2() {}

    public AccountV2(String owner, long balance, String tier) {
        this.owner = owner;
        this.balance = balance;
        this.tier = tier;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AccountV2)) return false;
        AccountV2 a = (AccountV2) o;
        return balance == a.balance && Objects.equals(owner, a.owner) && Objects.equals(tier, a.tier);
    }

    @Override
    public int hashCode() {
        return Objects.hash(owner, balance, tier);
    }
}
