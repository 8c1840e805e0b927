import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents (TypedDocumentNode) for the API tests, from the committed schema
 * and the operations under test/api. `npm run codegen` writes them;
 * `npm run codegen:check` (and test/api/schema.test.ts) fail when they are stale.
 * Only `typescript-operations` + `typed-document-node`: adding the `typescript`
 * plugin beside typescript-operations 6 gives duplicate identifiers.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/api/**/*.graphql'],
  generates: {
    'test/api/generated/graphql.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string' },
        enumType: 'const',
        useTypeImports: true,
        avoidOptionals: { field: true },
      },
    },
  },
  hooks: {},
};

export default config;
