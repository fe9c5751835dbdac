#!/usr/bin/env node
// The `fleet` command. The sources are TypeScript run through tsx's loader, registered from this
// file's own location so the command works from any working directory.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
