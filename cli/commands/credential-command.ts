import { mintCredential, type MintedCredential } from '../../api/auth/mint-credential.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { revocationAudit } from '../../db/credential-audit.ts';
import type { CredentialKind } from '../../db/credential-kinds.ts';
import { revokeCredential, type Revocation } from '../../db/credentials.ts';
import { inTransaction } from '../../db/database.ts';
import { findUser } from '../../db/users.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { cliActor } from '../cli-actor.ts';
import { optionalString, parseCommand, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { parseExpiry } from '../expiry-option.ts';
import { parseMode } from '../mode-option.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

/** A command's result, for `printResult`: the document `--json` prints, and the lines printed otherwise. */
interface Printed {
  json: unknown;
  text: string | string[];
}

/** One kind's command: its words and how it prints; the steps are shared. */
export interface CredentialCommandSpec {
  kind: CredentialKind;
  /** The word after `fleet`: `key`, `oauth-client`. */
  name: string;
  usage: string;
  /** The option of `create` naming what it may do, read into permission names (a UsageError when wrong). */
  grantsOption: 'permissions' | 'scopes';
  parseGrants(raw: string | undefined): string[];
  /** What `revoke` takes: `ID|PREFIX`, `ID|CLIENT_ID`. */
  reference: string;
  created(minted: MintedCredential): Printed;
  revoked(revocation: Omit<Revocation, 'revokedNow'>): Printed;
}

/** `2 credentials`: what a revocation took along. */
export const credentialCount = (n: number) => `${n} credential${n === 1 ? '' : 's'}`;

/**
 * `fleet <name> create --user … ` and `fleet <name> revoke REF`: the operator's side of the lifecycle
 * the API's credential routes serve, audited as `cli` in the user's account.
 */
export function credentialCommand(spec: CredentialCommandSpec): (config: Config, argv: string[]) => Promise<void> {
  async function create(config: Config, argv: string[]): Promise<void> {
    const parsed = parseCommand(argv, {
      user: { type: 'string' }, mode: { type: 'string' }, expires: { type: 'string' }, [spec.grantsOption]: { type: 'string' }, name: { type: 'string' },
    });
    const userRef = requiredString(parsed, 'user');
    const mode = parseMode(optionalString(parsed, 'mode'));
    const expiresRaw = optionalString(parsed, 'expires');
    const expiresAt = expiresRaw ? parseExpiry(expiresRaw) : null;
    const grants = spec.parseGrants(optionalString(parsed, spec.grantsOption));
    const minted = await withDatabase(config, async ({ db }) => {
      const user = await findUser(db, userRef);
      if (!user) throw new DomainError('not_found', `user ${userRef} does not exist`);
      const request = { userId: user.id, mode, name: optionalString(parsed, 'name') ?? null, grants, expiresAt };
      return mintCredential(db, spec.kind, request, await cliActor(db, user.id, mode));
    });
    const { json, text } = spec.created(minted);
    printResult(parsed.json, json, text);
  }

  async function revoke(config: Config, argv: string[]): Promise<void> {
    const parsed = parseCommand(argv, {}, true);
    const [ref] = parsed.positionals;
    if (!ref || parsed.positionals.length > 1) throw new UsageError(`usage: fleet ${spec.name} revoke ${spec.reference}`);
    const revocation = await withDatabase(config, ({ db }) =>
      inTransaction(db, async (trx) => {
        const revoked = await revokeCredential(trx, spec.kind, ref);
        const actor = await cliActor(trx, revoked.record.user_id, revoked.record.mode);
        for (const entry of revocationAudit(spec.kind, revoked)) await recordAudit(trx, actor, entry);
        return revoked;
      }),
    );
    const { json, text } = spec.revoked(revocation);
    printResult(parsed.json, json, text);
  }

  return async (config, argv) => {
    const [action, ...rest] = argv;
    if (action === 'create') return create(config, rest);
    if (action === 'revoke') return revoke(config, rest);
    throw new UsageError(`usage: ${spec.usage}`);
  };
}
