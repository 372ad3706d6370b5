package dev.storefront

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The endpoint index: which token subject each call needs, and which calls are never re-sent. */
class OperationInfoTest {
    @Test
    fun `catalog orders need user tokens and are never re-sent, merchant collection is client-only`() {
        val create = operationInfo(Operation.CREATE_ORDER)
        assertEquals(TokenSubject.USER, create.tokenSubject)
        assertEquals("orders.create", create.scope)
        assertFalse(create.resentOnFailure)
        assertFalse(operationInfo(Operation.START_PAYMENT).resentOnFailure)

        val merchantCreate = operationInfo(Operation.CREATE_MERCHANT_PAYMENT)
        assertEquals(TokenSubject.CLIENT, merchantCreate.tokenSubject)
        assertEquals("POST", merchantCreate.method)
        assertTrue(merchantCreate.resentOnFailure) // same idempotency key, same parameters

        assertEquals(TokenSubject.USER_OR_CLIENT, operationInfo(Operation.LIST_PRODUCTS).tokenSubject)
        assertEquals("/openapi/v1/orders/{order_no}", operationInfo(Operation.GET_ORDER).pathTemplate)
    }
}
