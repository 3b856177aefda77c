import 'reflect-metadata';
import {
  IsInt,
  IsOptional,
  IsString,
  MaxLength,
  MetadataStorage,
  Min,
  ValidateNested,
  getMetadataStorage,
  validate,
} from 'class-validator';
import { Type, plainToInstance } from 'class-transformer';
import {
  cacheValidationMetadataLookups,
  optionsKey,
} from './validation-metadata-cache';

class Base {
  @IsString()
  @MaxLength(5, { groups: ['short'] })
  name!: string;

  @IsInt({ always: true })
  count!: number;
}

class Derived extends Base {
  @IsString({ groups: ['admin'] })
  override name = '';

  @IsOptional()
  @Min(1)
  extra?: number;
}

class Inner {
  @IsString()
  label!: string;
}

class Outer {
  @ValidateNested()
  @Type(() => Inner)
  inner!: Inner;
}

/** class-validator's own answer, computed afresh. */
function uncached(
  ...args: Parameters<MetadataStorage['getTargetValidationMetadatas']>
) {
  return MetadataStorage.prototype.getTargetValidationMetadatas.apply(
    getMetadataStorage(),
    args,
  );
}

describe('cacheValidationMetadataLookups', () => {
  const storage = getMetadataStorage();
  beforeAll(() => cacheValidationMetadataLookups());

  it.each<
    [string, Parameters<MetadataStorage['getTargetValidationMetadatas']>]
  >([
    ['a class', [Base, undefined as never, false, false, undefined]],
    [
      'a subclass (own rules win over inherited ones)',
      [Derived, undefined as never, false, false, undefined],
    ],
    ['a group', [Base, undefined as never, false, false, ['short']]],
    [
      'another group on the subclass',
      [Derived, undefined as never, false, false, ['admin']],
    ],
    [
      'strict groups without a group',
      [Derived, undefined as never, false, true, undefined],
    ],
    [
      'strict groups with a group',
      [Derived, undefined as never, false, true, ['short']],
    ],
    ['always', [Derived, undefined as never, true, false, ['none']]],
    ['empty groups', [Base, undefined as never, false, false, []]],
    [
      'a class with no rules',
      [Object, undefined as never, false, false, undefined],
    ],
  ])(
    '%s: the same rules as class-validator, the same array the second time',
    (_, args) => {
      const first = storage.getTargetValidationMetadatas(...args);
      expect(first).toEqual(uncached(...args));
      expect(storage.getTargetValidationMetadatas(...args)).toBe(first);
      expect(storage.groupByPropertyName(first)).toBe(
        storage.groupByPropertyName(first),
      );
      expect(storage.groupByPropertyName(first)).toEqual(
        MetadataStorage.prototype.groupByPropertyName.call(storage, first),
      );
    },
  );

  it('keys differ for every option that changes the answer', () => {
    const keys = [
      optionsKey(undefined, false, false, undefined),
      optionsKey('cacheSchema', false, false, undefined),
      optionsKey(undefined, true, false, undefined),
      optionsKey(undefined, false, true, undefined),
      optionsKey(undefined, false, false, []),
      optionsKey(undefined, false, false, ['a']),
      optionsKey(undefined, false, false, ['a', 'b']),
      optionsKey(undefined, false, false, ['a,b']),
      optionsKey(undefined, false, false, ['a\u0000']),
      optionsKey('\u0000', false, false, undefined),
      optionsKey('x', false, false, ['a']),
      optionsKey('"]', false, false, ['a']),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a rule registered after a lookup is seen by the next lookup', async () => {
    class Late {
      title!: string;
    }
    const rulesOfLate = () =>
      storage.getTargetValidationMetadatas(
        Late,
        undefined as never,
        false,
        false,
      );
    const before = rulesOfLate();
    expect(before).toHaveLength(0);
    IsString()(Late.prototype, 'title');
    const after = rulesOfLate();
    expect(after).toHaveLength(1);
    expect(storage.groupByPropertyName(after)).toHaveProperty('title');
    const errors = await validate(plainToInstance(Late, { title: 3 }));
    expect(errors.map((e) => e.constraints)).toEqual([
      { isString: 'title must be a string' },
    ]);
  });

  it('validation gives the same errors, nested and inherited, lookup after lookup', async () => {
    const cases: Array<[new () => object, object, unknown]> = [
      [Derived, { name: 7, count: 'x', extra: 0, other: 1 }, undefined],
      [Derived, { name: 'abcdefgh', count: 2 }, ['short']],
      [Outer, { inner: { label: 3, more: true } }, undefined],
    ];
    for (const [type, plain, groups] of cases) {
      const options = {
        whitelist: true,
        forbidNonWhitelisted: true,
        groups: groups as string[] | undefined,
      };
      const first = await validate(plainToInstance(type, plain), options);
      const second = await validate(plainToInstance(type, plain), options);
      expect(first.length).toBeGreaterThan(0);
      expect(second).toEqual(first);
    }
  });

  it('installs once', () => {
    const lookUp = storage.getTargetValidationMetadatas;
    cacheValidationMetadataLookups();
    expect(storage.getTargetValidationMetadatas).toBe(lookUp);
  });
});
