import { describe, expect, it } from 'vitest';
import type { FormField, FormRequest } from '../../ports/parked/forms.ts';
import { fieldHint, readForm } from './forms.ts';

const field = (f: Partial<FormField> & Pick<FormField, 'name' | 'kind'>): FormField => ({
  label: f.name,
  required: false,
  ...f,
});
const form = (...fields: FormField[]): FormRequest => ({ from: 's', message: 'm', fields });
const pets = [
  { value: 'pet-1', label: 'Cats' },
  { value: 'pet-2', label: 'Dogs' },
];

describe('readForm', () => {
  it('reads each kind as its schema asks: numbers, yes/no, a choice by value or label, several choices', () => {
    const request = form(
      field({ name: 'n', kind: 'number' }),
      field({ name: 'i', kind: 'integer' }),
      field({ name: 'b', kind: 'boolean' }),
      field({ name: 'c', kind: 'choice', options: pets }),
      field({ name: 'cs', kind: 'choices', options: pets }),
      field({ name: 'typed', kind: 'choices', options: pets }),
      field({ name: 't', kind: 'text' }),
    );
    expect(
      readForm(request, {
        n: ' 3.5 ',
        i: '7',
        b: 'No',
        c: 'dogs',
        cs: ['pet-1', 'pet-2'],
        typed: 'Cats, pet-2',
        t: ' hi ',
      }),
    ).toEqual({
      content: {
        n: 3.5,
        i: 7,
        b: false,
        c: 'pet-2',
        cs: ['pet-1', 'pet-2'],
        typed: ['pet-1', 'pet-2'],
        t: 'hi',
      },
    });
  });

  it('leaves empty fields out, so the server’s defaults apply; a required one without a default is named', () => {
    const request = form(
      field({ name: 'name', label: 'Name', kind: 'text', required: true }),
      field({ name: 'seats', kind: 'integer', required: true, default: 1 }),
      field({ name: 'note', kind: 'text' }),
    );
    expect(readForm(request, { name: 'Ada', seats: '', note: '   ' })).toEqual({
      content: { name: 'Ada' },
    });
    expect(readForm(request, {})).toEqual({ problems: ['Name: required'] });
  });

  it('names every problem at once, by label', () => {
    const request = form(
      field({ name: 'i', label: 'Integer', kind: 'integer', min: 1, max: 100 }),
      field({ name: 'n', label: 'Number', kind: 'number', min: 0 }),
      field({ name: 'b', label: 'Agree', kind: 'boolean' }),
      field({ name: 'c', label: 'Pet', kind: 'choice', options: pets }),
      field({ name: 'cs', label: 'Pets', kind: 'choices', options: pets, max: 1 }),
      field({ name: 'e', label: 'Email', kind: 'text', format: 'email' }),
      field({ name: 'd', label: 'Born', kind: 'text', format: 'date' }),
      field({ name: 's', label: 'Code', kind: 'text', min: 3, max: 4 }),
      field({ name: 'u', label: 'Site', kind: 'text', format: 'uri' }),
    );
    expect(
      readForm(request, {
        i: '2.5',
        n: '-1',
        b: 'maybe',
        c: 'Parrots',
        cs: ['pet-1', 'pet-2'],
        e: 'ada',
        d: '10/12/1815',
        s: 'ab',
        u: 'example.com',
      }),
    ).toEqual({
      problems: [
        'Integer: a whole number',
        'Number: at least 0',
        'Agree: answer yes or no',
        'Pet: choose one of Cats, Dogs',
        'Pets: choose at most 1',
        'Email: an email address',
        'Born: a date as YYYY-MM-DD',
        'Code: at least 3 characters',
        'Site: a URL',
      ],
    });
    expect(readForm(request, { cs: 'Cats, Parrots' })).toEqual({
      problems: ['Pets: choose from Cats, Dogs'],
    });
  });
});

it('fieldHint says what a field takes and what an empty answer gives', () => {
  expect(
    fieldHint(
      field({
        name: 'c',
        label: 'Pet',
        kind: 'choice',
        options: pets,
        default: 'pet-1',
        description: 'your pet',
      }),
    ),
  ).toBe('Pet — your pet (Cats, Dogs) [pet-1]');
  expect(fieldHint(field({ name: 'n', label: 'Name', kind: 'text', required: true }))).toBe(
    'Name (required)',
  );
});
