import { type TestContext, test } from 'node:test';
import { dispatcher, type Handlers, ignore } from '../../src/ipc/dispatch.ts';
import { isPrimaryMessage, msg, type PrimaryMessage } from '../../src/ipc/protocol.ts';

test('each message goes to the handler of its type, with what came with it', (t: TestContext) => {
  const seen: string[] = [];
  const handlers: Handlers<PrimaryMessage, string> = {
    'flotilla:shutdown': (m, from) => seen.push(`shutdown ${m.deadline} ${m.retire} from ${from}`),
    'flotilla:ping': (m, from) => seen.push(`ping ${m.seq} from ${from}`),
    'flotilla:connection': (m) => seen.push(`connection ${m.head}`),
    'flotilla:handoff-end': ignore,
    'flotilla:certificates': (m) => seen.push(`certificates ${m.cert}`),
    'flotilla:start': (m) => seen.push(`start ${m.start}`),
    'flotilla:serve': () => seen.push('serve'),
    'flotilla:deliver': (m) => seen.push(`deliver ${m.topic}`),
    'flotilla:rate-limit-counts': (m) => seen.push(`counts ${m.counts.length}`),
    'flotilla:session-result': (m) => seen.push(`session ${m.id} ${m.ok}`),
  };
  const dispatch = dispatcher(handlers);
  const messages: unknown[] = [
    msg.ping(3),
    msg.shutdown(10, true),
    msg.handoffEnd(),
    msg.serve(),
    msg.sessionResult(4, false),
    msg.deliver('t', '', false),
  ];
  for (const m of messages) if (isPrimaryMessage(m)) dispatch(m, 'the primary');
  t.assert.deepStrictEqual(seen, ['ping 3 from the primary', 'shutdown 10 true from the primary', 'serve', 'session 4 false', 'deliver t']);
});
