// KafkaJS against a broker: admin (createTopics with KafkaJS's defaults, metadata),
// a producer, and a consumer in a group reading everything back.  Prints one JSON
// object with what each step saw; the Python test judges it.
//   node kafkajs_roundtrip.js HOST:PORT TOPIC COUNT
const { Kafka, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, countArg] = process.argv.slice(2);
  const count = Number(countArg);
  const kafka = new Kafka({ clientId: "hmb-interop", brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const out = {};

  const admin = kafka.admin();
  await admin.connect();
  // no numPartitions / replicationFactor: KafkaJS sends -1 for both (CreateTopics v3)
  out.created = await admin.createTopics({ topics: [{ topic }], waitForLeaders: true });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  out.partitions = meta.topics[0].partitions.length;
  out.topics = (await admin.listTopics()).includes(topic);

  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ key: `k${i % 7}`, value: `v${i}` });
  const sent = await producer.send({ topic, messages });
  out.produced = sent.map((r) => ({ partition: r.partition, errorCode: r.errorCode }));
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `${topic}-group` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of ${count}`)), 30000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.push(message.value.toString());
          if (seen.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  out.consumed = seen;
  const offsets = await admin.fetchOffsets({ groupId: `${topic}-group`, topics: [topic] });
  out.committed = offsets[0].partitions.map((p) => Number(p.offset)).reduce((a, b) => a + b, 0);
  await admin.disconnect();
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  },
);
