import addFormatsModule from 'ajv-formats';

/**
 * ajv-formats' plugin, typed as it is called: the package is CommonJS with a
 * default export, which TypeScript sees one level too deep under
 * `verbatimModuleSyntax`. Config and request validation both use it.
 *
 * @example
 * addFormats(new Ajv(), ['uri', 'email']);
 */
export const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
