import { describe, expect, it } from 'vitest';
import { passwordProblem } from './password-rule.ts';

describe('passwordProblem', () => {
  it.each([
    ['short', /at least 10/],
    ['x'.repeat(201), /at most 200/],
    ['ñ'.repeat(9), /at least 10/],
  ])('refuses %j', (password, problem) => {
    expect(passwordProblem(password)).toMatch(problem);
  });
  it.each(['correct horse', 'ñ'.repeat(10), 'x'.repeat(200)])('accepts %j', (password) => {
    expect(passwordProblem(password)).toBeUndefined();
  });
});
