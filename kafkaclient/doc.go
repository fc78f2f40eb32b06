// Package kafkaclient asks a real Kafka cluster what a savepoint edit needs to know (today: the
// first offset at or after a point in time, per partition) through the franz-go client, with
// the connection settings a Kafka client properties file gives (TLS and SASL in Kafka's own
// property names). Settings it cannot honour are errors, never ignored.
package kafkaclient
