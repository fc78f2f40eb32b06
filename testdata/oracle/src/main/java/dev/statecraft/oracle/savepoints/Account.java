package dev.statecraft.oracle.savepoints;

import java.util.Objects;

/**
 * The one POJO value type of the fixtures (type name "Account" in expectations). Flink serializes
 * it with its PojoSerializer; in JSON it is an object of its fields: {"balance": long, "owner":
 * string, "version": int}.
 */
public class Account {
    public String owner;
    public long balance;
    public int version;

    public Account() {}

    public Account(String owner, long balance, int version) {
        this.owner = owner;
        this.balance = balance;
        this.version = version;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Account)) return false;
        Account a = (Account) o;
        return balance == a.balance && version == a.version && Objects.equals(owner, a.owner);
    }

    @Override
    public int hashCode() {
        return Objects.hash(owner, balance, version);
    }
}
