// Model-agent client: drives `agentwire serve --agent openai`, in front of the scripted model of
// interop/model, with the official JS SDK (@a2a-js/sdk), A2A v1.0, as client.mjs drives the
// conformance agent; prints one JSON verdict line per case (ask, stream, context).
//
//   node model_client.mjs --url http://127.0.0.1:PORT --binding jsonrpc|rest
//
// stdout carries only the meta line and the verdicts; logs go to stderr.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';

import { answer, check, emit, runCases, streamProblem } from '../model/checks.mjs';

const BINDINGS = {
  jsonrpc: { protocol: 'JSONRPC', TransportFactory: JsonRpcTransportFactory },
  rest: { protocol: 'HTTP+JSON', TransportFactory: RestTransportFactory },
};

const log = (...args) => console.error('[interop-js]', ...args);

const stateName = (state) => taskStateToJSON(state).replace('TASK_STATE_', '');

const textOf = (artifact) =>
  (artifact?.parts ?? [])
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('');

// The SDK's request types are ts-proto objects: strings default to '' and enums are numbers, and
// its JSON encoders expect those defaults to be present.
function sendRequest(text, contextId = '') {
  const message = {
    messageId: randomUUID(),
    taskId: '',
    contextId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '', metadata: undefined }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false };
  return { tenant: '', message, configuration, metadata: undefined };
}

function describeEvent(event) {
  const { $case, value } = event.payload ?? {};
  const state = $case === 'task' || $case === 'statusUpdate' ? value.status?.state : undefined;
  return state === undefined ? $case ?? 'empty' : `${$case}:${stateName(state)}`;
}

function artifactText(task) {
  check(task.artifacts?.length === 1, `${task.artifacts?.length ?? 0} artifacts, expected one`);
  return textOf(task.artifacts[0]);
}

function makeCases(client) {
  let asked; // ask's task, whose context `context` continues
  const send = async (text, contextId, signal) => {
    const task = await client.sendMessage(sendRequest(text, contextId), { signal });
    check(task && 'status' in task, `expected a Task, got ${JSON.stringify(task)}`);
    return task;
  };
  return {
    async ask(signal) {
      const task = await send('hello', '', signal);
      check(task.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
      asked = task;
      const text = artifactText(task);
      check(text === answer('hello', 1, 0), `artifact text "${text}"`);
      return `COMPLETED, artifact "${text}"`;
    },

    async stream(signal) {
      const events = [];
      for await (const event of client.sendMessageStream(sendRequest('hello there'), { signal })) events.push(event);
      const summary = events.map(describeEvent).join(' > ');
      const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate').map((e) => e.payload.value);
      const read = chunks.map((c) => ({
        append: Boolean(c.append),
        last: Boolean(c.lastChunk),
        artifactId: c.artifact?.artifactId,
        text: textOf(c.artifact),
      }));
      const problem = streamProblem(read, answer('hello there', 1, 0));
      check(problem === null, `${problem}: ${summary}`);
      const ended = describeEvent(events.at(-1));
      check(ended === 'statusUpdate:COMPLETED', `the stream does not end with COMPLETED: ${summary}`);
      return `${chunks.length - 1} pieces make the answer, the last chunk holds it whole, then COMPLETED`;
    },

    async context(signal) {
      check(asked, 'ask made no task whose context to continue');
      const task = await send('hello again', asked.contextId, signal);
      check(task.id !== asked.id, "the send continued ask's task rather than starting one");
      check(task.contextId === asked.contextId, `context ${task.contextId}, not ask's ${asked.contextId}`);
      check(task.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
      const text = artifactText(task);
      check(text === answer('hello again', 2, 1), `artifact text "${text}"`);
      return `a new task in ask's context, artifact "${text}"`;
    },
  };
}

function installedSdkVersion() {
  // The package does not export its package.json, so locate it next to its entry point.
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  return JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version;
}

async function main() {
  const { values } = parseArgs({ options: { url: { type: 'string' }, binding: { type: 'string' } } });
  const { url, binding } = values;
  if (!url || !BINDINGS[binding]) throw new Error('usage: node model_client.mjs --url URL --binding jsonrpc|rest');
  emit({ meta: { sdk: '@a2a-js/sdk', version: installedSdkVersion(), binding } });

  const { protocol, TransportFactory } = BINDINGS[binding];
  // Offering a single transport forces the binding: the factory fails instead of falling back.
  const factory = new ClientFactory({
    transports: [new TransportFactory({ fetchImpl: fetch })],
    preferredTransports: [protocol],
  });
  const client = await factory.createFromUrl(url);
  await runCases(makeCases(client));
}

main().catch((error) => {
  log('harness failure:', error);
  process.exit(2);
});
