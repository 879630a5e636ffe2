package kraft

// Type is a MetadataRecordType id: the apiKey of a record's schema in Kafka's
// metadata/src/main/resources/common/metadata/*.json.
type Type = uint32

// The record types of Kafka 4.1, which assigns none to ids 6, 13 and 16.
const (
	TypeRegisterBroker            Type = 0
	TypeUnregisterBroker          Type = 1
	TypeTopic                     Type = 2
	TypePartition                 Type = 3
	TypeConfig                    Type = 4
	TypePartitionChange           Type = 5
	TypeFenceBroker               Type = 7
	TypeUnfenceBroker             Type = 8
	TypeRemoveTopic               Type = 9
	TypeDelegationToken           Type = 10
	TypeUserScramCredential       Type = 11
	TypeFeatureLevel              Type = 12
	TypeClientQuota               Type = 14
	TypeProducerIds               Type = 15
	TypeBrokerRegistrationChange  Type = 17
	TypeAccessControlEntry        Type = 18
	TypeRemoveAccessControlEntry  Type = 19
	TypeNoOp                      Type = 20
	TypeZkMigrationState          Type = 21
	TypeRemoveUserScramCredential Type = 22
	TypeBeginTransaction          Type = 23
	TypeEndTransaction            Type = 24
	TypeAbortTransaction          Type = 25
	TypeRemoveDelegationToken     Type = 26
	TypeRegisterController        Type = 27
	TypeClearElr                  Type = 28
)

// TypeNames are the names of Kafka's MetadataRecordType values, by record
// type: the schema's name in upper snake case, as Kafka's enum spells it.
var TypeNames = map[Type]string{
	TypeRegisterBroker:            "REGISTER_BROKER_RECORD",
	TypeUnregisterBroker:          "UNREGISTER_BROKER_RECORD",
	TypeTopic:                     "TOPIC_RECORD",
	TypePartition:                 "PARTITION_RECORD",
	TypeConfig:                    "CONFIG_RECORD",
	TypePartitionChange:           "PARTITION_CHANGE_RECORD",
	TypeFenceBroker:               "FENCE_BROKER_RECORD",
	TypeUnfenceBroker:             "UNFENCE_BROKER_RECORD",
	TypeRemoveTopic:               "REMOVE_TOPIC_RECORD",
	TypeDelegationToken:           "DELEGATION_TOKEN_RECORD",
	TypeUserScramCredential:       "USER_SCRAM_CREDENTIAL_RECORD",
	TypeFeatureLevel:              "FEATURE_LEVEL_RECORD",
	TypeClientQuota:               "CLIENT_QUOTA_RECORD",
	TypeProducerIds:               "PRODUCER_IDS_RECORD",
	TypeBrokerRegistrationChange:  "BROKER_REGISTRATION_CHANGE_RECORD",
	TypeAccessControlEntry:        "ACCESS_CONTROL_ENTRY_RECORD",
	TypeRemoveAccessControlEntry:  "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
	TypeNoOp:                      "NO_OP_RECORD",
	TypeZkMigrationState:          "ZK_MIGRATION_STATE_RECORD",
	TypeRemoveUserScramCredential: "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
	TypeBeginTransaction:          "BEGIN_TRANSACTION_RECORD",
	TypeEndTransaction:            "END_TRANSACTION_RECORD",
	TypeAbortTransaction:          "ABORT_TRANSACTION_RECORD",
	TypeRemoveDelegationToken:     "REMOVE_DELEGATION_TOKEN_RECORD",
	TypeRegisterController:        "REGISTER_CONTROLLER_RECORD",
	TypeClearElr:                  "CLEAR_ELR_RECORD",
}
