// Validates glTF 2.0 files (.glb or .gltf) with the Khronos glTF-Validator and exits non-zero
// when any has an error (or, with --strict, a warning).
//
// usage: NODE_PATH=DIR/node_modules node tools/validate_gltf.mjs [--strict] FILE...
//
// The validator is the npm package `gltf-validator`, installed outside the repository (see
// .ci/run); NODE_PATH names the node_modules folder that holds it.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename } from 'node:path';

// A require() rooted here resolves bare names through NODE_PATH as well, which ES imports do not.
const require = createRequire(import.meta.url);
let validator;
try {
    validator = require('gltf-validator');
} catch (error) {
    console.error(`validate_gltf: cannot load gltf-validator (${error.message}); install it with`);
    console.error('  npm install --prefix DIR gltf-validator   and run with NODE_PATH=DIR/node_modules');
    process.exit(2);
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];
const args = process.argv.slice(2);
const strict = args.includes('--strict');
const files = args.filter((a) => a !== '--strict');
if (files.length === 0) {
    console.error('usage: node tools/validate_gltf.mjs [--strict] FILE...');
    process.exit(2);
}

let failed = false;
for (const file of files) {
    let report;
    try {
        const bytes = await readFile(file);
        report = await validator.validateBytes(new Uint8Array(bytes), {
            uri: basename(file),
            maxIssues: 0, // no limit: list every issue
        });
    } catch (error) {
        console.error(`${file}: not validated: ${error}`);
        failed = true;
        continue;
    }
    const issues = report.issues;
    console.log(
        `${file}: ${issues.numErrors} errors, ${issues.numWarnings} warnings, ` +
            `${issues.numInfos} infos, ${issues.numHints} hints (glTF-Validator ${report.validatorVersion})`,
    );
    for (const m of issues.messages) {
        console.log(`  ${SEVERITY[m.severity] ?? m.severity} ${m.code} at ${m.pointer ?? '/'}: ${m.message}`);
    }
    if (issues.numErrors > 0 || (strict && issues.numWarnings > 0)) {
        failed = true;
    }
}
process.exit(failed ? 1 : 0);
