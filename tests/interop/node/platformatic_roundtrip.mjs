// @platformatic/kafka against a broker: it speaks only recent, flexible versions
// (Metadata v9+, JoinGroup v6+, OffsetFetch v8+, Fetch v12+).  Admin (create and list
// topics), a producer, and a consumer in a group; prints one JSON object with what each
// step saw, and the first error of a step that failed, for the Python test to judge.
//   node platformatic_roundtrip.mjs HOST:PORT TOPIC COUNT
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from "@platformatic/kafka";

async function main() {
  const [bootstrap, topic, countArg] = process.argv.slice(2);
  const count = Number(countArg);
  const common = { clientId: "hmb-interop", bootstrapBrokers: [bootstrap], retries: 2 };
  const out = {};

  const admin = new Admin(common);
  const created = await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
  out.created = created.map((t) => ({ name: t.name, partitions: t.partitions }));
  out.listed = (await admin.listTopics()).includes(topic);

  const producer = new Producer({ ...common, serializers: stringSerializers });
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ topic, key: `k${i % 7}`, value: `v${i}` });
  const sent = await producer.send({ messages });
  out.produced = (sent.offsets || []).map((o) => ({ partition: o.partition, offset: Number(o.offset) }));
  await producer.close();

  const groupId = `${topic}-group`;
  const consumer = new Consumer({ ...common, groupId, deserializers: stringDeserializers });
  const seen = [];
  try {
    const stream = await consumer.consume({
      topics: [topic],
      mode: "earliest",
      autocommit: false,
      sessionTimeout: 10000,
      heartbeatInterval: 500,
    });
    out.joined = true;
    const groups = await admin.describeGroups({ groups: [groupId] });
    const g = groups.get(groupId);
    out.group = { state: g.state, members: g.members.size, protocol: g.protocol };
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of ${count}`)), 30000);
      stream.on("data", (message) => {
        seen.push(message.value);
        if (seen.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      });
      stream.on("error", reject);
    });
    await stream.close();
  } catch (err) {
    out.consume_error = String(err && err.message ? err.message : err);
  }
  out.consumed = seen;
  await consumer.close(true);
  await admin.close();
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  },
);
