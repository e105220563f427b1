// KafkaJS's transactional producer against a broker: three transactions on one
// partition -- committed, aborted, committed -- then a read_committed consumer
// (KafkaJS's default) in a group reads the topic back.  Prints one JSON object;
// the Python test judges it.
//   node kafkajs_transactions.js HOST:PORT TOPIC
const { Kafka, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic] = process.argv.slice(2);
  const kafka = new Kafka({ clientId: "hmb-interop-txn", brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const out = { ended: [] };
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

  const producer = kafka.producer({ transactionalId: `${topic}-tx`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const rounds = [["c0", true], ["a1", false], ["c2", true]];
  for (const [name, commit] of rounds) {
    const txn = await producer.transaction();
    const messages = [];
    for (let i = 0; i < 5; i++) messages.push({ value: `${name}-${i}` });
    await txn.send({ topic, messages });
    if (commit) await txn.commit();
    else await txn.abort();
    out.ended.push(commit ? "commit" : "abort");
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `${topic}-group` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${seen.length}`)), 30000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.push(message.value.toString());
          if (seen.length >= 10) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  await admin.disconnect();
  out.consumed = seen;
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
