package dev.statecraft.oracle.savepoints;

import java.util.Objects;

/**
 * {@link Account} after a schema change that only adds a field, the nullable {@code Integer level}
 * (type name "AccountV3" in expectations). A different class for the reason given in
 * {@link AccountV2}. JSON: {"balance": long, "level": int or null, "owner": string, "version": int}.
 */
public class AccountV3 {
    public String owner;
    public long balance;
    public int version;
    public Integer level;

    public AccountV3() {}

    public AccountV3(String owner, long balance, int version, Integer level) {
        this.owner = owner;
        this.balance = balance;
        this.version = version;
        this.level = level;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AccountV3)) return false;
        AccountV3 a = (AccountV3) o;
        return balance == a.balance && version == a.version && Objects.equals(owner, a.owner) && Objects.equals(level, a.level);
    }

    @Override
    public int hashCode() {
        return Objects.hash(owner, balance, version, level);
    }
}
