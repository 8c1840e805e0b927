import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the API tests (TypedDocumentNode, from the operations under
 * test/api) and for the web page (typed query strings, from the operations under
 * src/web: the page sends the text as is and needs no GraphQL parser in its bundle),
 * from the committed schema. `npm run codegen` writes them;
 * `npm run codegen:check` (and test/api/schema.test.ts) fail when they are stale.
 * Only `typescript-operations` + `typed-document-node`: adding the `typescript`
 * plugin beside typescript-operations 6 gives duplicate identifiers.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  generates: {
    'test/api/generated/graphql.ts': {
      documents: ['test/api/**/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string' },
        enumType: 'const',
        useTypeImports: true,
        avoidOptionals: { field: true },
      },
    },
    'src/web/api/generated/graphql.ts': {
      documents: ['src/web/**/*.graphql'],
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { DateTime: 'string', JSON: 'unknown', ID: 'string' },
        enumType: 'const',
        useTypeImports: true,
        avoidOptionals: { field: true },
        documentMode: 'string',
      },
    },
  },
  hooks: {},
};

export default config;
