package kraft

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	p "github.com/logtool/logtool/logfmt/protocol"
)

// kafkaTypes are facts copied from Kafka 4.1's metadata message definitions,
// metadata/src/main/resources/common/metadata/*.json in apache/kafka: each
// file's "apiKey", "name" and "validVersions".
var kafkaTypes = []struct {
	id       Type
	name     string
	min, max int16
}{
	{0, "RegisterBrokerRecord", 0, 3},
	{1, "UnregisterBrokerRecord", 0, 0},
	{2, "TopicRecord", 0, 0},
	{3, "PartitionRecord", 0, 2},
	{4, "ConfigRecord", 0, 0},
	{5, "PartitionChangeRecord", 0, 2},
	{7, "FenceBrokerRecord", 0, 0},
	{8, "UnfenceBrokerRecord", 0, 0},
	{9, "RemoveTopicRecord", 0, 0},
	{10, "DelegationTokenRecord", 0, 0},
	{11, "UserScramCredentialRecord", 0, 0},
	{12, "FeatureLevelRecord", 0, 0},
	{14, "ClientQuotaRecord", 0, 0},
	{15, "ProducerIdsRecord", 0, 0},
	{17, "BrokerRegistrationChangeRecord", 0, 2},
	{18, "AccessControlEntryRecord", 0, 0},
	{19, "RemoveAccessControlEntryRecord", 0, 0},
	{20, "NoOpRecord", 0, 0},
	{21, "ZkMigrationStateRecord", 0, 0},
	{22, "RemoveUserScramCredentialRecord", 0, 0},
	{23, "BeginTransactionRecord", 0, 0},
	{24, "EndTransactionRecord", 0, 0},
	{25, "AbortTransactionRecord", 0, 0},
	{26, "RemoveDelegationTokenRecord", 0, 0},
	{27, "RegisterControllerRecord", 0, 0},
	{28, "ClearElrRecord", 0, 0},
}

// upperSnake is the enum constant Kafka's generator makes of a schema name.
func upperSnake(name string) string {
	return strings.ToUpper(regexp.MustCompile(`([a-z0-9])([A-Z])`).ReplaceAllString(name, "${1}_$2"))
}

// The one type table, and the schemas decoded, are exactly Kafka's: same ids,
// names and versions, no type missing and none Kafka never assigned.
func TestTypesMatchKafka(t *testing.T) {
	if len(TypeNames) != len(kafkaTypes) || len(schemas) != len(kafkaTypes) {
		t.Errorf("%d type names, %d schemas; Kafka 4.1 has %d types", len(TypeNames), len(schemas), len(kafkaTypes))
	}
	for _, k := range kafkaTypes {
		if got, want := TypeNames[k.id], upperSnake(k.name); got != want {
			t.Errorf("type %d: name %q, want %q", k.id, got, want)
		}
		m := schemas[k.id]
		if m == nil {
			t.Errorf("type %d (%s): no schema", k.id, k.name)
			continue
		}
		if m.Name != k.name || m.Valid != (p.Versions{Min: k.min, Max: k.max}) {
			t.Errorf("type %d: schema %s versions %v, want %s %d-%d", k.id, m.Name, m.Valid, k.name, k.min, k.max)
		}
	}
}

// A version past the highest Kafka 4.1 defines is refused as Kafka 4.1
// refuses it, whatever the bytes after the frame hold.
func TestVersionsPastKafka41Refused(t *testing.T) {
	for _, k := range kafkaTypes {
		v := k.max + 1
		got, err := Format(framed(int(k.id), int(v), b{}.Uv(0)), 7)
		if want := fmt.Sprintf("Error at 7, skipping. Failed to deserialize record with type %d", k.id); err == nil || got != want {
			t.Errorf("type %d version %d: %q, %v; want %q", k.id, v, got, err, want)
		}
	}
	// PartitionRecord version 3 (creationTimeMs, tag 3) came after Kafka
	// 4.1: a well-formed one is still refused, not decoded.
	v3 := framed(3, 3, b{}.I32(0).UUID(1).Uv(2).I32(1).Uv(2).I32(1).Uv(1).Uv(1).I32(1).I32(0).I32(0).Uv(2).UUID(2).
		Uv(1).Uv(3).Uv(8).I64(1700000000000))
	if got, err := Format(v3, 7); err == nil || got != "Error at 7, skipping. Failed to deserialize record with type 3" {
		t.Errorf("PartitionRecord v3: %q, %v", got, err)
	}
}
