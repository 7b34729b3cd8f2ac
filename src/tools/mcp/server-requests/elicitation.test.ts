import { describe, expect, it } from 'vitest';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/client';
// @ts-expect-error: the everything server ships JavaScript without types.
import { registerTriggerElicitationRequestTool } from '@modelcontextprotocol/server-everything/dist/tools/trigger-elicitation-request.js';
import { readForm } from '../../../core/delivery/waiting/forms.ts';
import { formOf, pageOf } from './elicitation.ts';

/** The everything server's own form (every kind of field the spec allows), as its tool sends it. */
async function everythingForm(): Promise<ElicitRequestFormParams> {
  let params: ElicitRequestFormParams | undefined;
  let run: (args: object, extra: object) => Promise<unknown> = async () => {};
  registerTriggerElicitationRequestTool({
    server: { getClientCapabilities: () => ({ elicitation: {} }) },
    registerTool: (_name: string, _config: object, handler: typeof run) => (run = handler),
  });
  await run(
    {},
    {
      sendRequest: async (request: { params: ElicitRequestFormParams }) => {
        params = request.params;
        return { action: 'decline' };
      },
    },
  );
  return params!;
}

describe('formOf', () => {
  it('reads every field kind of the everything server’s form, in order, with labels, defaults and ranges', async () => {
    const form = formOf('everything', await everythingForm());
    expect(form.from).toBe('everything');
    expect(form.message).toBe('Please provide inputs for the following fields:');
    expect(form.fields.map((f) => [f.name, f.kind])).toEqual([
      ['name', 'text'],
      ['check', 'boolean'],
      ['firstLine', 'text'],
      ['email', 'text'],
      ['homepage', 'text'],
      ['birthdate', 'text'],
      ['integer', 'integer'],
      ['number', 'number'],
      ['untitledSingleSelectEnum', 'choice'],
      ['untitledMultipleSelectEnum', 'choices'],
      ['titledSingleSelectEnum', 'choice'],
      ['titledMultipleSelectEnum', 'choices'],
      ['legacyTitledEnum', 'choice'],
    ]);
    const byName = Object.fromEntries(form.fields.map((f) => [f.name, f]));
    expect(byName.name).toMatchObject({ label: 'String', required: true });
    expect(byName.email).toMatchObject({ format: 'email', required: false });
    expect(byName.integer).toMatchObject({ min: 1, max: 100, default: 42 });
    expect(byName.untitledMultipleSelectEnum).toMatchObject({
      min: 1,
      max: 3,
      default: ['Guitar'],
    });
    expect(byName.titledSingleSelectEnum!.options).toEqual([
      { value: 'hero-1', label: 'Superman' },
      { value: 'hero-2', label: 'Green Lantern' },
      { value: 'hero-3', label: 'Wonder Woman' },
    ]);
    expect(byName.titledMultipleSelectEnum!.options![1]).toEqual({
      value: 'fish-2',
      label: 'Salmon',
    });
    expect(byName.legacyTitledEnum!.options![0]).toEqual({ value: 'pet-1', label: 'Cats' });
    // What people pick by label reaches the server as the schema's value.
    expect(
      readForm(form, {
        name: 'Ada',
        titledSingleSelectEnum: 'Wonder Woman',
        legacyTitledEnum: 'Fish',
      }),
    ).toEqual({
      content: { name: 'Ada', titledSingleSelectEnum: 'hero-3', legacyTitledEnum: 'pet-4' },
    });
  });
});

describe('pageOf', () => {
  const page = (url: string) =>
    pageOf('srv', { mode: 'url', message: 'Sign in there', url, elicitationId: 'e1' });

  it('asks for an http or https page with no fields, and offers no other kind of address', () => {
    expect(page('https://auth.example.com/x?y=1')).toEqual({
      from: 'srv',
      message: 'Sign in there',
      fields: [],
      url: 'https://auth.example.com/x?y=1',
    });
    expect(page('http://127.0.0.1:8080/')?.url).toBe('http://127.0.0.1:8080/');
    expect(page('javascript:alert(1)')).toBeUndefined();
    expect(page('file:///etc/passwd')).toBeUndefined();
    expect(page('not a url')).toBeUndefined();
  });
});
