// Tool name rules (lumo-protocol names.rs): what the host will refuse, checked
// when a provider is defined so its author hears about it first.

import {
  MAX_NAMESPACE_LEN, MAX_QUALIFIED_LEN, MAX_TOOL_NAME_LEN, MAX_TOOLS_PER_PROVIDER, RESERVED_NAMESPACES,
} from './contract.js';

/** Problems with a namespace, as sentences (empty when it is fine). */
export function namespaceProblems(namespace) {
  if (typeof namespace !== 'string') return ['namespace must be a string'];
  const problems = [];
  if (namespace.length < 1 || namespace.length > MAX_NAMESPACE_LEN) {
    problems.push(`namespace must be 1 to ${MAX_NAMESPACE_LEN} characters, got ${namespace.length}`);
  }
  if (!/^[a-z][a-z0-9]*$/.test(namespace)) {
    problems.push(`namespace ${JSON.stringify(namespace)} must be a lowercase letter followed by lowercase letters or digits`);
  }
  if (RESERVED_NAMESPACES.includes(namespace)) {
    problems.push(`namespace ${JSON.stringify(namespace)} is reserved for built-in tools`);
  }
  return problems;
}

/** Problems with one tool name within `namespace`. */
export function toolNameProblems(namespace, name) {
  if (typeof name !== 'string') return ['tool name must be a string'];
  const problems = [];
  if (name.length < 1 || name.length > MAX_TOOL_NAME_LEN) {
    problems.push(`tool name ${JSON.stringify(name)} must be 1 to ${MAX_TOOL_NAME_LEN} characters, got ${name.length}`);
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(name)) {
    problems.push(`tool name ${JSON.stringify(name)} must start with a letter or digit and use only letters, digits, _ and -`);
  }
  const qualified = `${namespace}_${name}`.length;
  if (qualified > MAX_QUALIFIED_LEN) {
    problems.push(`qualified tool name ${namespace}_${name} must be at most ${MAX_QUALIFIED_LEN} characters, got ${qualified}`);
  }
  return problems;
}

/** Every problem of a whole provider: namespace, count, each name, duplicates. */
export function providerProblems(namespace, names) {
  const problems = namespaceProblems(namespace);
  if (names.length > MAX_TOOLS_PER_PROVIDER) {
    problems.push(`a provider may expose at most ${MAX_TOOLS_PER_PROVIDER} tools, got ${names.length}`);
  }
  const seen = new Set();
  for (const name of names) {
    problems.push(...toolNameProblems(namespace, name));
    if (seen.has(name)) problems.push(`tool ${JSON.stringify(name)} is listed more than once`);
    seen.add(name);
  }
  return problems;
}
