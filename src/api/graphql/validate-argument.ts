import { validateOrReject, type ValidationError, type ValidatorOptions } from 'class-validator';
import { ArgumentValidationError } from 'type-graphql';

/** As type-graphql's own: properties left out are not checked, unknown objects pass. */
const VALIDATOR_OPTIONS: ValidatorOptions = { skipMissingProperties: true, forbidUnknownValues: false };

const isValidated = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * The schema's argument validation (`buildSchema`'s `validateFn`): class-validator's
 * decorators on the input classes, failing as type-graphql's built-in validation does
 * (an ArgumentValidationError, BAD_USER_INPUT to the client). The built-in one resolves
 * `require("class-validator")` again for every validated argument of every operation:
 * a module lookup per argument that costs several times the validation itself.
 */
export async function validateArgument(value: unknown): Promise<void> {
  if (!isValidated(value)) return;
  try {
    if (Array.isArray(value)) await Promise.all(value.filter(isValidated).map((item) => validateOrReject(item, VALIDATOR_OPTIONS)));
    else await validateOrReject(value, VALIDATOR_OPTIONS);
  } catch (error) {
    throw new ArgumentValidationError(error as ValidationError[]);
  }
}
