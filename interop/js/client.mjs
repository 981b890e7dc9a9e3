// Interop client: drives a running agentwire server through A2A v1.0 cases with the
// official JS SDK (@a2a-js/sdk) and prints one JSON verdict line per case.
//
//   node client.mjs --url http://127.0.0.1:PORT --binding jsonrpc|rest --token TOKEN
//
// stdout carries only the meta line and the verdicts; logs go to stderr.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

import { Role, StreamResponse, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { A2AError, TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors';

const CASE_TIMEOUT_MS = 20_000;
const POLL_INTERVAL_MS = 150;

const BINDINGS = {
  jsonrpc: { protocol: 'JSONRPC', TransportFactory: JsonRpcTransportFactory },
  rest: { protocol: 'HTTP+JSON', TransportFactory: RestTransportFactory },
};

const TERMINAL_STATES = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

// ---------------------------------------------------------------------------
// Small helpers

const log = (...args) => console.error('[interop-js]', ...args);
const emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

function installedSdkVersion() {
  // The package does not export its package.json, so locate it next to its entry point.
  const entry = createRequire(import.meta.url).resolve('@a2a-js/sdk');
  const manifest = join(dirname(entry), '..', 'package.json');
  return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

const stateName = (state) => taskStateToJSON(state).replace('TASK_STATE_', '');

const textOf = (messageOrArtifact) =>
  (messageOrArtifact?.parts ?? [])
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('');

const isTask = (result) => result && 'status' in result && 'history' in result;

// The SDK's request types are ts-proto objects: strings default to '' and enums are
// numbers, and its JSON encoders expect those defaults to be present.
function userMessage(text, { messageId = randomUUID(), taskId = '', contextId = '' } = {}) {
  return {
    messageId,
    taskId,
    contextId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '', metadata: undefined }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendRequest(message, { returnImmediately = false, pushConfig = undefined } = {}) {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: pushConfig,
      returnImmediately,
    },
    metadata: undefined,
  };
}

function pushConfigFor({ taskId = '', url, token, credentials }) {
  return {
    tenant: '',
    id: '',
    taskId,
    url,
    token,
    authentication: { scheme: 'Bearer', credentials },
  };
}

// The state carried by one StreamResponse (task snapshot or status update), if any.
function streamState(event) {
  const { $case, value } = event.payload ?? {};
  if ($case === 'task' || $case === 'statusUpdate') return value.status?.state;
  return undefined;
}

function streamTaskId(event) {
  const { $case, value } = event.payload ?? {};
  if ($case === 'task') return value.id;
  if ($case === 'statusUpdate' || $case === 'artifactUpdate') return value.taskId;
  return undefined;
}

function describeEvent(event) {
  const kind = event.payload?.$case ?? 'empty';
  const state = streamState(event);
  return state === undefined ? kind : `${kind}:${stateName(state)}`;
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function pollTask(client, taskId, isDone, signal) {
  for (;;) {
    const task = await client.getTask({ tenant: '', id: taskId }, { signal });
    if (isDone(task)) return task;
    await sleep(POLL_INTERVAL_MS, undefined, { signal });
  }
}

// Runs `action` and returns the error it raised; fails the check if it did not raise.
async function expectError(action, what) {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new CheckFailed(`${what} succeeded but should have failed`);
}

function errorSummary(error) {
  const code = error.envelopeCode ?? error.statusCode;
  return `${error.name}${code === undefined ? '' : ` (${code})`}: ${error.message}`;
}

// Resolves with `promise`, or rejects once `signal` aborts, whichever comes first.
function bounded(promise, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new CheckFailed(`timed out after ${CASE_TIMEOUT_MS} ms`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// A webhook endpoint on loopback that records every POST it receives.
async function startWebhookReceiver() {
  const deliveries = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhook`,
    deliveries,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------------------------------------------------------------------------
// Cases. Each returns a short description of what it verified, or throws.

function makeCases({ url, binding, client, anonymousClient }) {
  const errorCode = (error) => (binding === 'jsonrpc' ? error.envelopeCode : error.statusCode);

  return {
    async card() {
      const card = await new DefaultAgentCardResolver().resolve(url);
      check(card.name, 'card has no name');
      const bindings = card.supportedInterfaces.map((i) => i.protocolBinding);
      check(bindings.includes('JSONRPC'), `no JSONRPC interface in ${bindings}`);
      check(bindings.includes('HTTP+JSON'), `no HTTP+JSON interface in ${bindings}`);
      check(card.capabilities?.streaming === true, 'capabilities.streaming is not true');
      check(card.capabilities?.pushNotifications === true, 'capabilities.pushNotifications is not true');
      return `"${card.name}", interfaces ${bindings.join(',')}, streaming+push`;
    },

    async send_blocking(signal) {
      const message = userMessage('hello', { messageId: `tck-complete-task-${randomUUID()}` });
      const task = await client.sendMessage(sendRequest(message), { signal });
      check(isTask(task), 'result is not a Task');
      check(task.status.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status.state)}`);
      const reply = task.status.message;
      check(reply?.role === Role.ROLE_AGENT, 'status message is missing or not from the agent');
      check(textOf(reply) === 'Hello from TCK', `status text "${textOf(reply)}"`);
      return 'COMPLETED with agent message "Hello from TCK"';
    },

    async send_non_blocking(signal) {
      const request = sendRequest(userMessage('tck-long-running'), { returnImmediately: true });
      const first = await client.sendMessage(request, { signal });
      check(isTask(first), 'result is not a Task');
      check(!TERMINAL_STATES.has(first.status.state), `returned already ${stateName(first.status.state)}`);
      const done = await pollTask(client, first.id, (t) => TERMINAL_STATES.has(t.status.state), signal);
      check(done.status.state === TaskState.TASK_STATE_COMPLETED, `ended ${stateName(done.status.state)}`);
      const text = textOf(done.status.message);
      check(text === 'Long-running task finished', `final status text "${text}"`);
      return `returned ${stateName(first.status.state)}, polled to COMPLETED`;
    },

    async stream(signal) {
      const message = userMessage('hello', { messageId: `tck-stream-001-${randomUUID()}` });
      const events = await collect(client.sendMessageStream(sendRequest(message), { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(events.length > 0, 'no events');
      const taskIds = new Set(events.map(streamTaskId));
      check(taskIds.size === 1 && !taskIds.has(''), `events name task ids ${[...taskIds]}`);

      const artifactAt = events.findIndex((e) => e.payload?.$case === 'artifactUpdate');
      const workingAt = events.findIndex((e) => streamState(e) === TaskState.TASK_STATE_WORKING);
      const completedAt = events.findIndex((e) => streamState(e) === TaskState.TASK_STATE_COMPLETED);
      check(workingAt >= 0 && artifactAt > workingAt, `artifact does not follow WORKING: ${summary}`);
      check(completedAt > artifactAt, `COMPLETED does not follow the artifact: ${summary}`);
      check(completedAt === events.length - 1, `events after COMPLETED: ${summary}`);
      const artifacts = events.filter((e) => e.payload?.$case === 'artifactUpdate');
      check(artifacts.length === 1, `${artifacts.length} artifact events`);
      const text = textOf(artifacts[0].payload.value.artifact);
      check(text === 'Stream hello from TCK', `artifact text "${text}"`);
      return summary;
    },

    async get_history_length(signal) {
      const opened = await client.sendMessage(sendRequest(userMessage('tck-multi-turn history')), { signal });
      check(opened.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, 'first turn not INPUT_REQUIRED');
      const followUp = userMessage('more please', { taskId: opened.id, contextId: opened.contextId });
      const second = await client.sendMessage(sendRequest(followUp), { signal });
      check(second.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, 'second turn not INPUT_REQUIRED');

      const full = await client.getTask({ tenant: '', id: opened.id }, { signal });
      check(full.history.length >= 3, `full history has only ${full.history.length} messages`);
      const last = full.history.at(-1);
      const trimmed = await client.getTask({ tenant: '', id: opened.id, historyLength: 1 }, { signal });
      check(trimmed.history.length === 1, `historyLength=1 gave ${trimmed.history.length} messages`);
      check(trimmed.history[0].messageId === last.messageId, 'historyLength=1 did not return the last message');
      check(textOf(trimmed.history[0]) === textOf(last), 'last message text differs');
      return `full history ${full.history.length}, historyLength=1 -> last message`;
    },

    async list_paging(signal) {
      const contextId = randomUUID();
      const created = [];
      for (let i = 0; i < 3; i++) {
        const task = await client.sendMessage(sendRequest(userMessage(`paging ${i}`, { contextId })), { signal });
        check(task.contextId === contextId, `task ${i} landed in context ${task.contextId}`);
        created.push(task.id);
      }
      const page = (pageToken) => client.listTasks({ contextId, pageSize: 2, pageToken }, { signal });
      const first = await page('');
      check(first.tasks.length === 2, `first page has ${first.tasks.length} tasks`);
      check(first.nextPageToken !== '', 'first page has no nextPageToken');
      const second = await page(first.nextPageToken);
      check(second.tasks.length === 1, `second page has ${second.tasks.length} tasks`);
      check(second.nextPageToken === '', `second page token "${second.nextPageToken}"`);
      const listed = [...first.tasks, ...second.tasks].map((t) => t.id);
      check(new Set(listed).size === 3, 'a task was repeated across pages');
      check(created.every((id) => listed.includes(id)), 'listed tasks differ from the created ones');
      return 'pages of 2 + 1, tokens right, no repeats';
    },

    async cancel(signal) {
      const request = sendRequest(userMessage('tck-cancel'), { returnImmediately: true });
      const started = await client.sendMessage(request, { signal });
      check(isTask(started), 'result is not a Task');
      check(!TERMINAL_STATES.has(started.status.state), `started ${stateName(started.status.state)}`);
      const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined }, { signal });
      check(canceled.id === started.id, 'cancel returned another task');
      check(canceled.status.state === TaskState.TASK_STATE_CANCELED, `cancel returned ${stateName(canceled.status.state)}`);
      const fetched = await client.getTask({ tenant: '', id: started.id }, { signal });
      check(fetched.status.state === TaskState.TASK_STATE_CANCELED, `GetTask shows ${stateName(fetched.status.state)}`);
      return 'cancel -> CANCELED, GetTask -> CANCELED';
    },

    async subscribe(signal) {
      const request = sendRequest(userMessage('tck-long-running'), { returnImmediately: true });
      const started = await client.sendMessage(request, { signal });
      check(!TERMINAL_STATES.has(started.status.state), `started ${stateName(started.status.state)}`);
      // collect() only returns once the server closes the stream.
      const events = await collect(client.resubscribeTask({ tenant: '', id: started.id }, { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(events.length > 0, 'no events');
      check(events.every((e) => streamTaskId(e) === started.id), `events for other tasks: ${summary}`);
      check(streamState(events.at(-1)) === TaskState.TASK_STATE_COMPLETED, `did not end COMPLETED: ${summary}`);
      return `${summary}, stream closed`;
    },

    async multi_turn(signal) {
      const opened = await client.sendMessage(sendRequest(userMessage('tck-multi-turn start')), { signal });
      check(opened.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `first turn ${stateName(opened.status?.state ?? 0)}`);
      const reply = userMessage('done', { taskId: opened.id, contextId: opened.contextId });
      const closed = await client.sendMessage(sendRequest(reply), { signal });
      check(closed.status?.state === TaskState.TASK_STATE_COMPLETED, `follow-up ${stateName(closed.status?.state ?? 0)}`);
      check(closed.id === opened.id, 'follow-up answered on another task');
      check(closed.contextId === opened.contextId, 'follow-up answered in another context');
      return 'INPUT_REQUIRED -> "done" -> COMPLETED on the same task and context';
    },

    async stream_follow_up(signal) {
      const opened = await client.sendMessage(sendRequest(userMessage('tck-multi-turn start')), { signal });
      check(opened.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `first turn ${stateName(opened.status?.state ?? 0)}`);
      const reply = userMessage('done', { taskId: opened.id, contextId: opened.contextId });
      const events = await collect(client.sendMessageStream(sendRequest(reply), { signal }));
      const summary = events.map(describeEvent).join(' > ');
      check(streamState(events.at(-1)) === TaskState.TASK_STATE_COMPLETED, `the streamed follow-up ended at ${summary}`);
      check(events.every((e) => streamTaskId(e) === opened.id), `events of other tasks: ${summary}`);
      return summary;
    },

    async push_config_crud(signal) {
      // An INPUT_REQUIRED task stays open, so the server has no reason to refuse the config.
      const task = await client.sendMessage(sendRequest(userMessage('tck-multi-turn push-crud')), { signal });
      const wanted = pushConfigFor({ taskId: task.id, url: 'http://127.0.0.1:9/unused', token: 'crud-token', credentials: 'crud-secret' });
      const created = await client.createTaskPushNotificationConfig(wanted, { signal });
      check(created.id !== '', 'created config has no id');
      check(created.taskId === task.id && created.url === wanted.url && created.token === wanted.token, 'created config differs');

      const ref = { tenant: '', taskId: task.id, id: created.id };
      const fetched = await client.getTaskPushNotificationConfig(ref, { signal });
      check(fetched.id === created.id && fetched.url === wanted.url, 'get returned another config');
      const listRequest = { tenant: '', taskId: task.id, pageSize: 0, pageToken: '' };
      const listed = await client.listTaskPushNotificationConfig(listRequest, { signal });
      check(listed.configs.some((c) => c.id === created.id), 'list does not show the config');

      await client.deleteTaskPushNotificationConfig(ref, { signal });
      const afterDelete = await client.listTaskPushNotificationConfig(listRequest, { signal });
      check(!afterDelete.configs.some((c) => c.id === created.id), 'list still shows the deleted config');
      const error = await expectError(() => client.getTaskPushNotificationConfig(ref, { signal }), 'get after delete');
      check(error instanceof A2AError, `get after delete raised a non-A2A error: ${error.message}`);
      return `create/get/list/delete ok; get after delete -> ${error.name}`;
    },

    async push_delivery(signal) {
      const receiver = await startWebhookReceiver();
      try {
        const push = pushConfigFor({ url: receiver.url, token: 'push-token', credentials: 'push-secret' });
        const task = await client.sendMessage(sendRequest(userMessage('tck-long-running'), { pushConfig: push }), { signal });
        check(task.status?.state === TaskState.TASK_STATE_COMPLETED, `task ended ${stateName(task.status?.state ?? 0)}`);

        // Each delivery body must be a v1.0 StreamResponse; decode it with the SDK's own codec.
        const events = () => receiver.deliveries.map((d) => StreamResponse.fromJSON(JSON.parse(d.body)));
        const completed = (e) => streamState(e) === TaskState.TASK_STATE_COMPLETED;
        while (!events().some(completed)) await sleep(POLL_INTERVAL_MS, undefined, { signal });
        await sleep(300, undefined, { signal }); // let any straggler arrive before judging the order

        for (const { headers } of receiver.deliveries) {
          check(headers['x-a2a-notification-token'] === 'push-token', `token header "${headers['x-a2a-notification-token']}"`);
          check(headers.authorization === 'Bearer push-secret', `Authorization header "${headers.authorization}"`);
        }
        const delivered = events();
        const seen = delivered.map(describeEvent).join(' > ');
        check(delivered.every((e) => streamTaskId(e) === task.id), `deliveries for other tasks: ${seen}`);
        check(completed(delivered.at(-1)), `last delivery is not COMPLETED: ${seen}`);
        return `${delivered.length} deliveries (${seen}), token and Authorization right`;
      } finally {
        await receiver.close();
      }
    },

    async extended_card(signal) {
      const extended = await client.getAgentCard({ signal });
      const skills = extended.skills.map((s) => s.id);
      check(skills.includes('extended'), `extended card skills: ${skills}`);
      const publicCard = await new DefaultAgentCardResolver().resolve(url);
      check(!publicCard.skills.some((s) => s.id === 'extended'), 'public card already has the extended skill');
      check(extended.skills.length === publicCard.skills.length + 1, 'extended card should have exactly one more skill');

      const refusal = await expectError(() => anonymousClient.getAgentCard({ signal }), 'extended card without credentials');
      // JSON-RPC: the SDK keeps the envelope but not the HTTP status; REST: it keeps the status.
      const unauthenticated =
        binding === 'rest'
          ? refusal.statusCode === 401
          : (refusal.data ?? []).some((detail) => detail.reason === 'UNAUTHENTICATED');
      check(unauthenticated, `refusal is not an authentication error: ${errorSummary(refusal)}`);
      return `extended skill present; without credentials -> ${errorSummary(refusal)}`;
    },

    async error_unknown_task(signal) {
      const error = await expectError(() => client.getTask({ tenant: '', id: randomUUID() }, { signal }), 'GetTask of a random id');
      check(error instanceof TaskNotFoundError, `raised ${errorSummary(error)}`);
      const expected = binding === 'jsonrpc' ? -32001 : 404;
      check(errorCode(error) === expected, `code ${errorCode(error)}, expected ${expected}`);
      return errorSummary(error);
    },

    async error_cancel_finished(signal) {
      const message = userMessage('hello', { messageId: `tck-complete-task-${randomUUID()}` });
      const task = await client.sendMessage(sendRequest(message), { signal });
      check(task.status?.state === TaskState.TASK_STATE_COMPLETED, 'setup task did not complete');
      const error = await expectError(
        () => client.cancelTask({ tenant: '', id: task.id, metadata: undefined }, { signal }),
        'cancel of a COMPLETED task'
      );
      check(error instanceof TaskNotCancelableError, `raised ${errorSummary(error)}`);
      const expected = binding === 'jsonrpc' ? -32002 : 409;
      check(errorCode(error) === expected, `code ${errorCode(error)}, expected ${expected}`);
      return errorSummary(error);
    },
  };
}

// ---------------------------------------------------------------------------

async function createClient(url, binding, fetchImpl) {
  const { protocol, TransportFactory } = BINDINGS[binding];
  // Offering a single transport forces the binding: the factory fails instead of falling back.
  const factory = new ClientFactory({
    transports: [new TransportFactory({ fetchImpl })],
    preferredTransports: [protocol],
  });
  return factory.createFromUrl(url);
}

function bearerFetch(token) {
  return createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${token}` }),
    shouldRetryWithHeaders: async () => undefined, // a static token: nothing to refresh
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      binding: { type: 'string' },
      token: { type: 'string' },
    },
  });
  const { url, binding, token } = values;
  if (!url || !BINDINGS[binding] || !token) {
    throw new Error('usage: node client.mjs --url URL --binding jsonrpc|rest --token TOKEN');
  }

  emit({ meta: { sdk: '@a2a-js/sdk', version: installedSdkVersion(), binding } });

  const client = await createClient(url, binding, bearerFetch(token));
  const anonymousClient = await createClient(url, binding, fetch);
  log(`using ${client.transport.protocolName} transport against ${url}`);

  for (const [name, run] of Object.entries(makeCases({ url, binding, client, anonymousClient }))) {
    const signal = AbortSignal.timeout(CASE_TIMEOUT_MS);
    const started = Date.now();
    try {
      const detail = await bounded(run(signal), signal);
      emit({ case: name, ok: true, detail });
    } catch (error) {
      const detail = error instanceof CheckFailed ? error.message : `unexpected ${errorSummary(error)}`;
      emit({ case: name, ok: false, detail });
    }
    log(`${name} done in ${Date.now() - started} ms`);
  }
}

main().catch((error) => {
  log('harness failure:', error);
  process.exit(2);
});
